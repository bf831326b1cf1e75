/**
 * What the PRM judge needs of a language model: messages in, text out. Adapters: the served
 * policy (`createPolicyJudgeModel`) and any OpenAI-compatible endpoint (`createOpenAIJudgeModel`).
 * A model that cannot answer throws (a `ClawrlError`, retryable when a retry may help); whatever
 * text it returns, however odd, is data for the vote parser.
 */
import type { ChatMessage } from '../spec/chat.js';

export interface JudgeModelRequest {
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
}

export type JudgeModel = (request: JudgeModelRequest, signal: AbortSignal) => Promise<string>;
