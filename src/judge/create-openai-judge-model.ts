/**
 * The `openai` judge backend: an OpenAI-compatible `/v1/chat/completions` endpoint of any kind (vLLM,
 * SGLang, Ollama, OpenAI), and the judge model's context window from its `/v1/models`. `baseUrl`
 * may end in `/v1` or not. The API key is the caller's to find (the CLI reads it from the
 * environment).
 */
import { defaultJudgeContextTokens, estimateTokens, type JudgeContextWindow } from '../core/judge-prompt-budget.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import { judgeModelOfSingleAnswers, type JudgeModel } from './judge-model.js';
import { judgeChatCompletionResponseSchema, judgeModelListResponseSchema, type JudgeChatCompletionRequest } from './openai-judge-api.js';

export interface OpenAIJudgeModelOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per call; default two minutes. */
  timeoutMs?: number;
}

function v1UrlOf(baseUrl: string, path: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? `${trimmed}/${path}` : `${trimmed}/v1/${path}`;
}

export function chatCompletionsUrlOf(baseUrl: string): string {
  return v1UrlOf(baseUrl, 'chat/completions');
}

export interface OpenAIJudgeContextWindowOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The window when the endpoint reports none (OpenAI, Ollama); default 32768 tokens. */
  defaultTokens?: number;
  /** Per call; default 30 seconds. */
  timeoutMs?: number;
}

/**
 * The judge model's context window: the `max_model_len` that `/v1/models` reports for `model`
 * (vLLM does), else `defaultTokens`. Tokens are counted with `estimateTokens`, since clawrl does not
 * have a remote judge's tokenizer. An endpoint that cannot be reached throws a retryable error, so
 * the window is asked again with the next judgement rather than guessed for good.
 */
export function openAIJudgeContextWindow(options: OpenAIJudgeContextWindowOptions): (signal: AbortSignal) => Promise<JudgeContextWindow> {
  const url = v1UrlOf(options.baseUrl, 'models');
  const fallback = options.defaultTokens ?? defaultJudgeContextTokens;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (signal) => {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (error) {
      throw new ClawrlError('upstream_error', `cannot reach the judge at ${url}: ${String(error)}`, { cause: error, retryable: true });
    }
    if (response.status >= 500 || response.status === 408 || response.status === 429) {
      throw new ClawrlError('upstream_error', `the judge at ${url} answered HTTP ${response.status}`, { retryable: true });
    }
    const listed = judgeModelListResponseSchema.safeParse(response.ok ? await response.json().catch(() => null) : null);
    const entry = listed.success ? listed.data.data.find((model) => model.id === options.model) : undefined;
    return { tokens: entry?.max_model_len ?? fallback, countTokens: estimateTokens };
  };
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
