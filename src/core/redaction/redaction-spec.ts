/**
 * The redaction spec file (`--redact <file>`): which detectors run, which the operator adds, and
 * what is never redacted. Validated with zod where it is read (the CLI), so a bad pattern fails at
 * start-up with its path, never on a live turn.
 */
import { z } from 'zod';

const kindSchema = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a kebab-case kind of at most 32 characters, e.g. employee-id');

function compiles(source: string, flags: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}

export const redactionPatternSchema = z
  .strictObject({
    /** Named in reports and in `disable`; default `custom-<kind>`. */
    id: z.string().regex(/^[a-z][a-z0-9-]{0,47}$/).optional(),
    /** The placeholder's kind: `[REDACTED:<kind>]`. */
    kind: kindSchema,
    /** A JavaScript regular expression. */
    pattern: z.string().min(1),
    /** `i` for case-insensitive (`g` and `d` are always added). */
    flags: z.enum(['', 'i', 'm', 'im', 'mi', 's', 'is', 'si']).default(''),
    /** The capture group that is the secret (0: the whole match). */
    group: z.number().int().min(0).default(0),
  })
  .refine((pattern) => compiles(pattern.pattern, pattern.flags), { message: 'pattern is not a valid regular expression', path: ['pattern'] });

export const redactionSpecSchema = z.strictObject({
  /** The detectors to start from: every default one, or none (only `patterns`). */
  detectors: z.enum(['default', 'none']).default('default'),
  /** Default detectors (by id, e.g. `ipv4`) or whole kinds (e.g. `phone`) turned off. */
  disable: z.array(z.string().min(1)).default([]),
  /** Patterns added; they win over the defaults where both match. */
  patterns: z.array(redactionPatternSchema).default([]),
  /** Texts never redacted, exactly as written (a team's shared support address, a public test key). */
  allow: z.array(z.string().min(1)).default([]),
});

export type RedactionSpec = z.infer<typeof redactionSpecSchema>;

/** `--redact default`: every default detector, nothing added or allowed. */
export const defaultRedactionSpec: RedactionSpec = redactionSpecSchema.parse({});
