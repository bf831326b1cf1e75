/**
 * The `openai` judge backend: an OpenAI-compatible `/v1/chat/completions` endpoint of any kind (vLLM,
 * SGLang, Ollama, OpenAI). `baseUrl` may end in `/v1` or not. The API key is the caller's to
 * find (the CLI reads it from the environment).
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import { judgeModelOfSingleAnswers, type JudgeModel } from './judge-model.js';
import { judgeChatCompletionResponseSchema, type JudgeChatCompletionRequest } from './openai-judge-api.js';

export interface OpenAIJudgeModelOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per call; default two minutes. */
  timeoutMs?: number;
}

export function chatCompletionsUrlOf(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? `${trimmed}/chat/completions` : `${trimmed}/v1/chat/completions`;
}

export function createOpenAIJudgeModel(options: OpenAIJudgeModelOptions): JudgeModel {
  const url = chatCompletionsUrlOf(options.baseUrl);
  const timeoutMs = options.timeoutMs ?? 120_000;
  return judgeModelOfSingleAnswers(async (request, signal) => {
    const body: JudgeChatCompletionRequest = {
      model: options.model,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
      temperature: request.temperature,
      max_tokens: request.maxTokens,
      stream: false,
    };
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch (error) {
      if (timeout.aborted) {
        throw new ClawrlError('upstream_timeout', `the judge at ${url} did not answer within ${timeoutMs} ms`, { cause: error });
      }
      throw new ClawrlError('upstream_error', `cannot reach the judge at ${url}: ${String(error)}`, { cause: error, retryable: true });
    }
    const text = await response.text();
    if (!response.ok) {
      throw new ClawrlError('upstream_error', `the judge at ${url} answered HTTP ${response.status}: ${text.slice(0, 300)}`, {
        retryable: response.status === 408 || response.status === 429 || response.status >= 500,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ClawrlError('upstream_error', `the judge at ${url} answered invalid JSON`, { cause: error, retryable: true });
    }
    const validation = judgeChatCompletionResponseSchema.safeParse(parsed);
    if (!validation.success) {
      throw new ClawrlError('upstream_error', `the judge at ${url} answered without choices[0].message`, { retryable: true });
    }
    return validation.data.choices[0]?.message.content ?? '';
  });
}
