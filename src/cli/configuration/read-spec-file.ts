/**
 * Reads a JSON spec file an option names (`--judge-rules`, `--redact`) and checks it with its
 * schema, so a bad file stops start-up with the option, the path and each issue by path.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface SpecFileOptions<Schema extends z.ZodType> {
  path: string;
  schema: Schema;
  /** The option's key, e.g. `judgeRules`; the flag is derived from it for messages. */
  param: string;
  /** What the file should be, e.g. `a rules-judge spec`. */
  what: string;
  /** Said before `cannot read` (e.g. what else the option accepts). */
  readHint?: string;
}

export function readSpecFile<Schema extends z.ZodType>(options: SpecFileOptions<Schema>): z.output<Schema> {
  const flag = `--${options.param.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(options.path, 'utf8'));
  } catch (error) {
    throw new ClawrlError('configuration_error', `${flag}: ${options.readHint ?? ''}cannot read ${options.path} as JSON: ${(error as Error).message}`, {
      param: options.param,
      cause: error,
    });
  }
  const result = options.schema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ClawrlError('configuration_error', `${flag}: ${options.path} is not ${options.what}:\n  ${issues.join('\n  ')}`, { param: options.param });
  }
  return result.data;
}
