/**
 * Turns a corpus example into what the trainer consumes: the prompt rendered with the chat
 * template and tokenized exactly as serving will tokenize it, then the reply's tokens and the
 * end-of-turn token. Prompt and reply are encoded separately because at serving time the prompt is
 * encoded alone and the model generates the rest, so training must see that same split.
 */
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatTemplate } from '../../model/chat-template.js';
import type { Tokenizer } from '../../model/tokenizer.js';

export interface TrainingSequenceData {
  tokenIds: number[];
  /** Index of the first reply token: loss covers targetStart..end (the end-of-turn included). */
  targetStart: number;
}

export interface SequenceEncoder {
  encode(messages: readonly ChatMessage[]): TrainingSequenceData;
  /** The prompt tokens of a conversation awaiting the assistant's reply. */
  encodePrompt(messages: readonly ChatMessage[]): number[];
}

export function createSequenceEncoder(template: ChatTemplate, tokenizer: Tokenizer): SequenceEncoder {
  const endOfTurn = tokenizer.specialTokenIds.imEnd;
  if (endOfTurn === null) throw new ClawrlError('configuration_error', 'the tokenizer has no <|im_end|> token');
  const encodePrompt = (messages: readonly ChatMessage[]): number[] =>
    tokenizer.encode(template.render({ messages, addGenerationPrompt: true }), { addSpecialTokens: false });
  return {
    encodePrompt,
    encode(messages) {
      const reply = messages.at(-1);
      if (reply === undefined || reply.role !== 'assistant') {
        throw new ClawrlError('invalid_request', 'a training conversation must end with the assistant reply');
      }
      const prompt = encodePrompt(messages.slice(0, -1));
      const target = [...tokenizer.encode(reply.content, { addSpecialTokens: false }), endOfTurn];
      return { tokenIds: [...prompt, ...target], targetStart: prompt.length };
    },
  };
}
