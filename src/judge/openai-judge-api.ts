/** The slice of the OpenAI chat-completions wire the `openai` judge backend speaks. */
import { z } from 'zod';

export interface JudgeChatCompletionRequest {
  model: string;
  messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[];
  temperature: number;
  max_tokens: number;
  stream: false;
}

export const judgeChatCompletionResponseSchema = z.object({
  choices: z
    .array(z.object({ message: z.object({ content: z.string().nullable().optional() }) }))
    .min(1),
});
