/**
 * What the PRM judge needs to judge with the built-in model (`--judge policy` serving
 * `builtin:tiny`): the small prompt budgets it was trained on, and a hint filter that reads hints
 * with the style reader of `style-hint.ts`. A judge of any other model keeps its hints as given and
 * shares its context window among the prompt's parts (`src/core/judge-prompt-budget.ts`).
 */
import type { JudgePromptBudget } from '../core/judge-prompts.js';
import type { JudgeHintFilter, PrmJudgeOptions } from '../judge/create-prm-judge.js';
import { groundedHint } from './grounded-hint.js';
import { hintAsksForChange } from './style-hint.js';

/**
 * The built-in model's budgets, in characters. Its context is 1024 tokens and its judge corpus
 * (`corpus/judge-task.ts`) is rendered with exactly these, so changing them changes what it reads.
 */
export const builtinJudgePromptBudget: JudgePromptBudget = { context: 500, systemHead: 120, response: 600, nextState: 300 };

export interface BuiltinHintFilterOptions {
  /** `--judge-hint-grounding`: drop hint sentences about styles the next state never mentions. */
  grounding: boolean;
}

/**
 * Of each hint, with `grounding`, only the sentences about styles the next state mentions
 * (`groundedHint`): the built-in judge writes a fluent style hint even for a message it cannot
 * read. Then the hint is dropped when it asks only for style values the reply already has
 * (`hintAsksForChange`): it read "Nobody boxes their answer" under a boxed answer as "Put the final
 * answer in \boxed{}.", and distilling that hint teaches the policy to box. A hint naming no style
 * value the reader knows passes.
 */
export function createBuiltinHintFilter(options: BuiltinHintFilterOptions): JudgeHintFilter {
  return (hint, turn) => {
    const kept = options.grounding ? groundedHint(hint, turn.nextState) : hint;
    return kept !== null && hintAsksForChange(kept, turn.response) ? kept : null;
  };
}

/** The PRM judge options of the built-in model's judge. */
export function builtinJudgeOptions(options: BuiltinHintFilterOptions): Pick<PrmJudgeOptions, 'fixedBudget' | 'hintFilter'> {
  return { fixedBudget: builtinJudgePromptBudget, hintFilter: createBuiltinHintFilter(options) };
}
