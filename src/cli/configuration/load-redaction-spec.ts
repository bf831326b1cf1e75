/**
 * Resolves `--redact`: `off` (nothing redacted), `default` (the default detectors) or the path of
 * a redaction spec file (JSON, `core/redaction/redaction-spec.ts`), read and checked at start-up so
 * a bad pattern stops the server before any turn is kept unredacted.
 */
import { defaultRedactionSpec, redactionSpecSchema, type RedactionSpec } from '../../core/redaction/redaction-spec.js';
import { readSpecFile } from './read-spec-file.js';

/** The spec `--redact` names; null for `off`. */
export function loadRedactionSpec(reference: string): RedactionSpec | null {
  if (reference === 'off') return null;
  if (reference === 'default') return defaultRedactionSpec;
  return readSpecFile({ path: reference, schema: redactionSpecSchema, param: 'redact', what: 'a redaction spec', readHint: 'expected off, default or a redaction spec file; ' });
}
