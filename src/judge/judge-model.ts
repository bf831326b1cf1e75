/**
 * What the PRM judge needs of a language model: messages in, `n` sampled answers out. Adapters:
 * the served policy (`createPolicyJudgeModel`, which samples the n answers as one batch sharing
 * the prompt's KV cache) and any OpenAI-compatible endpoint (`createOpenAIJudgeModel`, one call
 * per answer, since not every such endpoint honours `n`). A model that cannot answer throws (a
 * `ClawrlError`, retryable when a retry may help); whatever text it returns, however odd, is data
 * for the vote parser.
 */
import type { ChatMessage } from '../spec/chat.js';

export interface JudgeModelRequest {
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
  /** Independent answers wanted (the votes). */
  n: number;
}

export type JudgeModel = (request: JudgeModelRequest, signal: AbortSignal) => Promise<string[]>;

/** A judge model from a function that gives one answer per call: `n` calls at once. */
export function judgeModelOfSingleAnswers(
  answer: (request: Omit<JudgeModelRequest, 'n'>, signal: AbortSignal) => Promise<string>,
): JudgeModel {
  return ({ n, ...request }, signal) => Promise.all(Array.from({ length: n }, () => answer(request, signal)));
}
