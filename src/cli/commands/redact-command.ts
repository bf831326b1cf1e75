/**
 * `clawrl redact`: text on stdin, the same text redacted on stdout, by the rules `--redact` names
 * (the ones the server keeps turns by), so a user can check their own data before pointing an
 * agent at clawrl. `--json` prints the spans instead: offsets in the input (UTF-16 code units, as
 * JavaScript counts), kinds and detectors, and the redacted text; never the secrets themselves.
 * `clawrl eval redaction` measures the same rules on the labelled corpus (`lab/redaction/`).
 */
import { createRedactor, type RedactionSpan } from '../../core/redaction/create-redactor.js';
import { measureRedaction, type RedactionMeasurement } from '../../lab/redaction/measure-redaction.js';
import { generateRedactionCorpus } from '../../lab/redaction/redaction-corpus.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { loadRedactionSpec } from '../configuration/load-redaction-spec.js';

export interface RedactCommandResult {
  text: string;
  spans: RedactionSpan[];
  /** Spans by kind. */
  kinds: Record<string, number>;
}

/** The redactor `--redact` names; `off` is refused, as it would redact nothing. */
function redactorOf(reference: string) {
  const spec = loadRedactionSpec(reference);
  if (spec === null) throw new ClawrlError('configuration_error', '--redact off redacts nothing; name default or a redaction spec file.', { param: 'redact' });
  return createRedactor(spec);
}

/** Redacts `input` by the `--redact` rules. */
export function redactWithRules(input: string, reference: string): RedactCommandResult {
  const { text, spans } = redactorOf(reference).redact(input);
  const kinds: Record<string, number> = {};
  for (const span of spans) kinds[span.kind] = (kinds[span.kind] ?? 0) + 1;
  return { text, spans, kinds };
}

export async function readStandardInput(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** `clawrl eval redaction`: the rules on the generated labelled corpus. */
export function runEvalRedaction(reference: string, documents: number, seed: string): RedactionMeasurement & { seed: string } {
  if (!Number.isInteger(documents) || documents < 1) throw new ClawrlError('configuration_error', `--documents must be a positive integer, got ${documents}.`, { param: 'documents' });
  return { seed, ...measureRedaction(redactorOf(reference), generateRedactionCorpus(documents, seed)) };
}
