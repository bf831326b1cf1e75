/**
 * Sampling replies from a loaded built-in model without a server: the measurement's style replies,
 * and a judge model over them for measuring the model as a judge, its votes seeded by the prompt as
 * the policy judge's are (`judge/create-policy-judge-model.ts`), so a measurement repeats.
 */
import { deriveSamplingSeed } from '../../core/seeded-random.js';
import type { JudgeModel } from '../../judge/judge-model.js';
import type { Transformer } from '../../model/transformer.js';
import type { ChatMessage } from '../../spec/chat.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';

export interface Reply {
  text: string;
  endedWithEndOfTurn: boolean;
}

export async function sampleReplies(
  transformer: Transformer,
  renderer: ChatRenderer,
  messages: ChatMessage[],
  count: number,
  temperature: number,
  maxTokens: number,
  seed: number,
): Promise<{ replies: Reply[]; tokens: number }> {
  return sampleRepliesToPrompt(transformer, renderer, renderer.renderPrompt(messages, []), count, temperature, maxTokens, seed);
}

/** `sampleReplies` on a prompt already rendered (and fitted) to token ids. */
export async function sampleRepliesToPrompt(
  transformer: Transformer,
  renderer: ChatRenderer,
  promptTokenIds: number[],
  count: number,
  temperature: number,
  maxTokens: number,
  seed: number,
): Promise<{ replies: Reply[]; tokens: number }> {
  const room = transformer.shape.maxPositionEmbeddings - promptTokenIds.length;
  const { sequences } = await transformer.sample({
    promptTokenIds,
    n: count,
    maxTokens: Math.max(1, Math.min(maxTokens, room)),
    temperature,
    seed,
    stopTokenIds: [...renderer.stopTokenIds],
  });
  let tokens = 0;
  const replies = sequences.map((sequence) => {
    tokens += sequence.tokenIds.length;
    const last = sequence.tokenIds.at(-1);
    const endedWithEndOfTurn = sequence.finishReason === 'stop' && last !== undefined && renderer.stopTokenIds.includes(last);
    return { text: renderer.decode(sequence.tokenIds), endedWithEndOfTurn };
  });
  return { replies, tokens };
}

export function transformerJudgeModel(transformer: Transformer, renderer: ChatRenderer): JudgeModel {
  return async (request) => {
    const seed = deriveSamplingSeed('policy-judge', JSON.stringify(request.messages));
    const { replies } = await sampleReplies(transformer, renderer, request.messages, request.n, request.temperature, request.maxTokens, seed);
    return replies.map((reply) => reply.text);
  };
}
