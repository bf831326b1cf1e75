/**
 * The PRM judge: m verdict votes (default 3, temperature 0.6) on the prompt of
 * `src/core/judge-prompts.ts`, each read by its last `\boxed{}`; unreadable votes are dropped and
 * the majority wins, ties giving 0. With `wantHint` it also asks the hint-extraction prompt
 * (default m times) and keeps every accepted hint that asks for a change as a candidate, unless
 * the verdict is positive; the longest is the provisional choice. All calls run concurrently. If
 * any call fails the whole judgement throws, so the worker retries the turn rather than record a
 * judgement made of fewer votes than asked for.
 */
import { groundedHint } from '../core/grounded-hint.js';
import { hintAsksForChange } from '../core/hint.js';
import { aggregateVotes, parseHintResponse, parseVote, selectHint } from '../core/judge-votes.js';
import {
  buildHintPrompt,
  buildJudgePrompt,
  judgePromptVersion,
  type JudgePromptBudgets,
} from '../core/judge-prompts.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { Judge, JudgeInput, JudgeResult } from '../spec/judge.js';
import type { JudgeVote } from '../spec/records.js';
import type { JudgeModel } from './judge-model.js';

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
  maxTokens?: number;
  budgets?: Partial<JudgePromptBudgets>;
  /** Milliseconds clock for latency; default `performance.now`. */
  clock?: () => number;
  /**
   * Keep of each hint only the sentences about styles the next state mentions (`groundedHint`);
   * default false. Off by default: it removed every invented hint of the built-in judge and sped
   * the teacher up, but it also dropped the invented "Write at least 100 words." that happened to
   * be what the TA wanted, and the TA was learned in fewer seeds (docs/judging.md).
   */
  groundHints?: boolean;
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
      const promptInput = {
        context: input.context,
        response: input.response,
        nextState: input.nextState,
        ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
      };
      const verdictPrompt = buildJudgePrompt(promptInput);
      const hintPrompt = input.wantHint ? buildHintPrompt(promptInput) : null;
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
      // the verdict, since a hint on a satisfied user's reply can only teach something unasked for
      // (the built-in judge wrote "Keep it short." on a TA's thanks for a thorough grading, and OPD
      // on such hints made the TA's replies shorter). The votes keep the hints they gave.
      // A hint that asks only for what the reply already does is a misreading, not a correction
      // (`hintAsksForChange`); it stays in the votes but is no candidate.
      // With `groundHints`, sentences about a style the next state never mentions are dropped
      // first: a small judge writes a fluent style hint even for a message it cannot read.
      const asksForChange = (hint: string | null): hint is string => hint !== null && hintAsksForChange(hint, input.response.content);
      const nextStateText = options.groundHints === true ? input.nextState.map((message) => message.content).join('\n') : null;
      const grounded = (hint: string | null): string | null => (hint === null || nextStateText === null ? hint : groundedHint(hint, nextStateText));
      const hintCandidates = score === 1 ? [] : hints.map((vote) => grounded(vote.hint)).filter(asksForChange);
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
