/**
 * The PRM judge: m verdict votes (default 3, temperature 0.6) on the prompt of
 * `src/core/judge-prompts.ts`, each read by its last `\boxed{}`; unreadable votes are dropped and
 * the majority wins, ties giving 0. With `wantHint` it also asks the hint-extraction prompt
 * (default m times) and keeps every accepted hint as a candidate (through `hintFilter` when one is
 * given), unless the verdict is positive; the longest is the provisional choice. All calls run
 * concurrently. If any call fails the whole judgement throws, so the worker retries the turn rather
 * than record a judgement made of fewer votes than asked for.
 *
 * The prompt's parts get a budget shared out of the judge model's context window
 * (`src/core/judge-prompt-budget.ts`), or fixed budgets (`fixedBudget`, the built-in model's).
 */
import {
  defaultJudgeContextTokens,
  estimateTokens,
  judgePromptBudgetFor,
  type JudgeContextWindow,
} from '../core/judge-prompt-budget.js';
import { buildHintPrompt, buildJudgePrompt, judgePromptVersion, type JudgePromptBudget } from '../core/judge-prompts.js';
import { parseHintResponse, parseVote, selectHint } from '../core/judge-votes.js';
import { aggregateVotes } from '../core/rl/aggregate-votes.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { Judge, JudgeInput, JudgeResult } from '../spec/judge.js';
import type { JudgeVote } from '../spec/records.js';
import type { JudgeModel } from './judge-model.js';

/** The texts of the judged turn a hint filter may read. */
export interface HintFilterTurn {
  /** The reply's text. */
  response: string;
  /** The next state's messages, one per line. */
  nextState: string;
}

/** Keeps, trims or drops one accepted hint: the hint to keep as a candidate, or null. */
export type JudgeHintFilter = (hint: string, turn: HintFilterTurn) => string | null;

export interface PrmJudgeOptions {
  /** The backend name recorded with each judgement: `policy` or `openai`. */
  judgeId: string;
  modelName: string;
  model: JudgeModel;
  /** Verdict votes per turn; default 3. */
  votes?: number;
  /** Hint-extraction answers per turn when hints are wanted; default `votes`. */
  hintVotes?: number;
  temperature?: number;
  /** Tokens each answer may take; default 512. Reserved out of the context window. */
  maxTokens?: number;
  /**
   * The judge model's context window, asked once, at the first judgement. Default: 32768 tokens,
   * counted with `estimateTokens`.
   */
  contextWindow?: (signal: AbortSignal) => Promise<JudgeContextWindow>;
  /** Fixed budgets instead of shares of the window: the built-in model's (`src/builtin/builtin-judge-options.ts`). */
  fixedBudget?: JudgePromptBudget;
  /**
   * Applied to each accepted hint before it becomes a candidate; default none (every hint the judge
   * gives is kept). Only the built-in model's judge has one (`src/builtin/builtin-judge-options.ts`).
   */
  hintFilter?: JudgeHintFilter;
  /** Milliseconds clock for latency; default `performance.now`. */
  clock?: () => number;
}

function asJudgeFailure(error: unknown): ClawrlError {
  if (ClawrlError.isInstance(error)) return error;
  return new ClawrlError('upstream_error', `the judge model failed: ${String(error)}`, { cause: error, retryable: true });
}

export function createPrmJudge(options: PrmJudgeOptions): Judge {
  const votes = options.votes ?? 3;
  const hintVotes = options.hintVotes ?? votes;
  const temperature = options.temperature ?? 0.6;
  const maxTokens = options.maxTokens ?? 512;
  const clock = options.clock ?? (() => performance.now());
  if (!Number.isInteger(votes) || votes < 1 || !Number.isInteger(hintVotes) || hintVotes < 1) {
    throw new ClawrlError('configuration_error', `the judge needs at least one vote, got ${votes} votes and ${hintVotes} hint votes`);
  }
  const askWindow = options.contextWindow ?? (async () => ({ tokens: defaultJudgeContextTokens, countTokens: estimateTokens }));
  let contextWindow: Promise<JudgeContextWindow> | null = null;

  async function budgetFor(input: JudgeInput, signal: AbortSignal): Promise<JudgePromptBudget> {
    if (options.fixedBudget !== undefined) return options.fixedBudget;
    // Asked once; a failed ask fails this judgement (the worker retries it) and is asked again next time.
    contextWindow ??= askWindow(signal).catch((error: unknown) => {
      contextWindow = null;
      throw asJudgeFailure(error);
    });
    return judgePromptBudgetFor(input, await contextWindow, maxTokens);
  }

  async function ask(messages: JudgeModelMessages, n: number, signal: AbortSignal): Promise<string[]> {
    let answers: string[];
    try {
      answers = await options.model({ messages, temperature, maxTokens, n }, signal);
    } catch (error) {
      throw asJudgeFailure(error);
    }
    if (answers.length !== n) throw asJudgeFailure(new Error(`asked for ${n} answers, got ${answers.length}`));
    return answers;
  }

  return {
    judgeId: options.judgeId,
    judgeModel: options.modelName,
    promptVersion: judgePromptVersion,
    async judge(input: JudgeInput, signal: AbortSignal): Promise<JudgeResult> {
      const started = clock();
      const promptInput = { context: input.context, response: input.response, nextState: input.nextState };
      const budget = await budgetFor(input, signal);
      const verdictPrompt = buildJudgePrompt(promptInput, budget);
      const hintPrompt = input.wantHint ? buildHintPrompt(promptInput, budget) : null;
      const [verdictTexts, hintTexts] = await Promise.all([
        ask(verdictPrompt, votes, signal),
        hintPrompt === null ? [] : ask(hintPrompt, hintVotes, signal),
      ]);
      const verdicts: JudgeVote[] = verdictTexts.map((text) => ({
        kind: 'verdict',
        text,
        score: parseVote(text).score,
        hint: null,
        rejection: null,
      }));
      const hints: JudgeVote[] = hintTexts.map((text) => {
        const parsed = parseHintResponse(text);
        return {
          kind: 'hint',
          text,
          score: parsed.accepted ? 1 : parsed.reason === 'negative-vote' ? -1 : null,
          hint: parsed.hint,
          rejection: parsed.accepted ? null : parsed.reason,
        };
      });
      const score = aggregateVotes(verdicts.map((vote) => (vote.score === null ? { score: null, reason: 'unparseable' } : { score: vote.score }))).score;
      // A verdict that the reply worked and a hint that corrects it contradict each other; trust
      // the verdict, since a hint on a satisfied user's reply can only teach something unasked for.
      // The votes keep the hints they gave, whatever the filter makes of them.
      const turn: HintFilterTurn = { response: input.response.content, nextState: input.nextState.map((message) => message.content).join('\n') };
      const filter = options.hintFilter ?? ((hint: string) => hint);
      const hintCandidates =
        score === 1 ? [] : hints.flatMap((vote) => (vote.hint === null ? [] : [filter(vote.hint, turn)])).filter((hint): hint is string => hint !== null);
      return {
        score,
        votes: [...verdicts, ...hints],
        hint: selectHint(hintCandidates)?.hint ?? null,
        hintCandidates,
        judgeModel: options.modelName,
        promptVersion: judgePromptVersion,
        latencyMs: clock() - started,
      };
    },
  };
}

type JudgeModelMessages = Parameters<JudgeModel>[0]['messages'];
