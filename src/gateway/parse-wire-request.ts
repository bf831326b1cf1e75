/** Reads a request body as JSON and validates it against a wire schema: a 400 that names the field, or the request. */
import type { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ClawrlError('invalid_request', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Validates a parsed JSON body against a protocol's request schema; the first issue becomes a 400 naming its field. */
export function parseWireRequest<T>(schema: z.ZodType<T>, text: string): T {
  const validation = schema.safeParse(parseJsonBody(text));
  if (validation.success) return validation.data;
  const issue = validation.error.issues[0];
  const path = issue === undefined ? '' : issuePath(issue);
  throw new ClawrlError('invalid_request', `Invalid request: ${path ? `${path}: ` : ''}${issue?.message ?? 'invalid body'}`, {
    ...(path ? { param: path } : {}),
  });
}
