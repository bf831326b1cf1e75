/**
 * Resolves `--judge-rules`: what `--judge rules` judges by. Unset: the built-in predicates over the
 * next state. A path: a rules-judge spec (JSON). `user:<student|ta|teacher|user.json>`: that
 * simulated user's own preference rules and hint, read off the response — an oracle that knows
 * the preference, for ablations that separate what the judge reads from what training does with it.
 */
import { readFileSync } from 'node:fs';
import { rulesJudgeSpecForUser } from '../builtin/user-preference.js';
import { loadSimulatedUser } from '../eval/personalize/load-simulated-user.js';
import { defaultRulesJudgeSpec, rulesJudgeSpecSchema, type RulesJudgeSpec } from '../judge/create-rules-judge.js';
import { ClawrlError } from '../spec/clawrl-error.js';

const userPrefix = 'user:';

function parseSpecFile(path: string): RulesJudgeSpec {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ClawrlError('configuration_error', `--judge-rules: cannot read ${path} as JSON: ${(error as Error).message}`, {
      param: 'judgeRules',
      cause: error,
    });
  }
  const result = rulesJudgeSpecSchema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ClawrlError('configuration_error', `--judge-rules: ${path} is not a rules-judge spec:\n  ${issues.join('\n  ')}`, {
      param: 'judgeRules',
    });
  }
  return result.data;
}

export function loadRulesJudgeSpec(reference: string | undefined): RulesJudgeSpec {
  if (reference === undefined) return defaultRulesJudgeSpec;
  if (!reference.startsWith(userPrefix)) return parseSpecFile(reference);
  try {
    return rulesJudgeSpecForUser(loadSimulatedUser(reference.slice(userPrefix.length)));
  } catch (error) {
    const message = ClawrlError.isInstance(error) ? error.message : String(error);
    throw new ClawrlError('configuration_error', `--judge-rules ${reference}: ${message}`, { param: 'judgeRules', cause: error });
  }
}
