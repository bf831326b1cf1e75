/**
 * Resolves `--judge-rules`: what `--judge rules` judges by. Unset: the built-in predicates over the
 * next state. A path: a rules-judge spec (JSON). (The personalization experiment's oracle judge
 * reaches the server as such a file, written by `clawrl eval personalize`.)
 */
import { defaultRulesJudgeSpec, rulesJudgeSpecSchema, type RulesJudgeSpec } from '../../judge/create-rules-judge.js';
import { readSpecFile } from './read-spec-file.js';

export function loadRulesJudgeSpec(reference: string | undefined): RulesJudgeSpec {
  return reference === undefined ? defaultRulesJudgeSpec : readSpecFile({ path: reference, schema: rulesJudgeSpecSchema, param: 'judgeRules', what: 'a rules-judge spec' });
}
