/**
 * Resolves `--judge-rules`: what `--judge rules` judges by. Unset: the built-in predicates over the
 * next state. A path: a rules-judge spec (JSON). (The personalization experiment's oracle judge
 * reaches the server as such a file, written by `clawrl eval personalize`.)
 */
import { readFileSync } from 'node:fs';
import { defaultRulesJudgeSpec, rulesJudgeSpecSchema, type RulesJudgeSpec } from '../../judge/create-rules-judge.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

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
  return reference === undefined ? defaultRulesJudgeSpec : parseSpecFile(reference);
}
