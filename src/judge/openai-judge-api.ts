/** The slice of the OpenAI wire the `openai` judge backend speaks: chat completions and the model list. */
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

/** `GET /v1/models`: vLLM reports each model's context window as `max_model_len`; OpenAI and others do not. */
export const judgeModelListResponseSchema = z.object({
  data: z.array(z.object({ id: z.string(), max_model_len: z.number().int().positive().nullable().optional() })),
});
