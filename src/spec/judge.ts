/**
 * The `Judge` seam: scores a turn from (request context, response, next state), the process reward
 * model of the RL loop. Implementations: the PRM judge (m votes of a language model, served by the
 * policy engine or any OpenAI-compatible endpoint) and the rules judge (declarative predicates).
 *
 * Expected outcomes are data: unreadable votes, no accepted hint, a judge that says "unclear".
 * Infrastructure failures (the judge model is unreachable, times out, answers garbage HTTP) are
 * thrown, so the judge worker keeps the turn queued and retries it later.
 */
import type { ChatMessage } from './chat.js';
import type { JudgeScore, JudgeVote } from './records.js';

export interface JudgeInput {
  /** The request messages the response answered, oldest first. */
  context: ChatMessage[];
  response: ChatMessage;
  /** What followed the response: the user's reply or tool results. Never empty. */
  nextState: ChatMessage[];
  /** Also extract hindsight hints (OPD and combine). */
  wantHint: boolean;
}

export interface JudgeResult {
  /** Majority verdict; null when no vote was readable. */
  score: JudgeScore | null;
  /** Every raw answer, verdicts first, then hint answers. */
  votes: JudgeVote[];
  /** The longest accepted hint; the worker may choose another candidate by top-k overlap. */
  hint: string | null;
  /** Every accepted hint, in vote order. */
  hintCandidates: string[];
  judgeModel: string;
  promptVersion: string;
  latencyMs: number;
}

export interface Judge {
  /** The backend: `policy`, `openai`, `rules`. */
  readonly judgeId: string;
  readonly judgeModel: string;
  /** Changes whenever the prompts or the rules change, so old judgements stay comparable. */
  readonly promptVersion: string;
  judge(input: JudgeInput, signal: AbortSignal): Promise<JudgeResult>;
}
