/**
 * `/v1/chat/completions`, `/v1/completions` and `/tokenize` of the fake server, in vLLM's wire
 * shapes (engines.md §1.2, §1.3, §1.5). In `plain` and `sglang` modes the chat route drops the
 * vLLM extras (`prompt_token_ids`, `token_ids`, `stop_reason`), like Ollama or OpenAI.
 */
import {
  encodeBytes,
  endOfTurnTokenId,
  fakeReply,
  fakeTopAlternatives,
  renderPromptIds,
  sampleReply,
  streamedTextDeltas,
  tokenText,
  type FakeSample,
} from './fake-model.js';
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  chatLogprobEntry,
  errorResponse,
  lastUserText,
  previousIds,
  splitText,
  stopStrings,
  wireMessagesToTurns,
  wireToolNames,
  type FakeBody,
  type FakeResponse,
} from './fake-wire.js';

export interface FakeRouteContext {
  mode: 'vllm' | 'plain' | 'sglang';
  /** The model name the request selected (base or adapter). */
  model: string;
  requestNumber: number;
  created: number;
  maxModelLength: number;
  /** vLLM: started with `--enable-auto-tool-choice --tool-call-parser <parser>`. */
  autoToolChoice: boolean;
}

interface SampledChoice {
  index: number;
  sample: FakeSample;
  toolCall: { id: string; name: string; arguments: string } | null;
  finishReason: 'stop' | 'length' | 'tool_calls';
  stopReason: string | number | null;
}

function sampleChoices(body: FakeBody, context: FakeRouteContext, promptIds: number[], userText: string, toolNames: string[]): SampledChoice[] {
  const count = asNumber(body['n']) ?? 1;
  const maxTokens = asNumber(body['max_completion_tokens']) ?? asNumber(body['max_tokens']) ?? context.maxModelLength - promptIds.length;
  const stops = stopStrings(body['stop']);
  const callableTools = body['tool_choice'] === 'none' ? [] : toolNames;
  return Array.from({ length: count }, (_, index) => {
    const reply = fakeReply(userText, callableTools, index);
    const sample = sampleReply(promptIds, reply.text, maxTokens, reply.toolCall === null ? stops : []);
    const completedCall = reply.toolCall !== null && sample.matched === endOfTurnTokenId;
    const toolCall = completedCall && reply.toolCall !== null ? { id: `chatcmpl-tool-${context.requestNumber}${index}`, ...reply.toolCall } : null;
    const finishReason = toolCall !== null ? 'tool_calls' : sample.finish;
    // vLLM reports the matched stop string, or null when the model's own end token stopped it.
    const stopReason = typeof sample.matched === 'string' ? sample.matched : null;
    return { index, sample, toolCall, finishReason, stopReason };
  });
}

function usage(promptTokens: number, choices: SampledChoice[]): unknown {
  const completionTokens = choices.reduce((total, choice) => total + choice.sample.tokens.length, 0);
  return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null };
}

function wireToolCall(call: { id: string; name: string; arguments: string }): unknown {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** vLLM's `tool_choice`: as sent, else `auto` when tools are given (its request validator's default). */
function effectiveToolChoice(body: FakeBody): unknown {
  return body['tool_choice'] ?? (asArray(body['tools']).length > 0 ? 'auto' : undefined);
}

export function handleChatCompletions(body: FakeBody, context: FakeRouteContext): FakeResponse {
  const messages = asArray(body['messages']);
  if (messages.length === 0) return errorResponse(400, 'messages must be a non-empty list', 'BadRequestError', 'messages');
  if (context.mode === 'vllm' && !context.autoToolChoice && effectiveToolChoice(body) === 'auto') {
    return errorResponse(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', 'BadRequestError');
  }
  const turns = wireMessagesToTurns(messages);
  const toolNames = wireToolNames(body['tools']);
  const promptIds = renderPromptIds(turns, toolNames);
  const choices = sampleChoices(body, context, promptIds, lastUserText(turns), toolNames);
  const wantsLogprobs = body['logprobs'] === true;
  const topCount = asNumber(body['top_logprobs']) ?? 0;
  const withTokenIds = context.mode === 'vllm' && body['return_token_ids'] === true;
  const isVllm = context.mode === 'vllm';
  const identity = { id: `chatcmpl-${context.requestNumber}`, created: context.created, model: context.model };

  const logprobsOf = (choice: SampledChoice, from: number, to: number): unknown => {
    if (!wantsLogprobs) return null;
    const previous = previousIds(promptIds, choice.sample.tokens);
    return { content: choice.sample.tokens.slice(from, to).map((token, offset) => chatLogprobEntry(previous[from + offset] ?? 0, token, topCount)) };
  };

  if (body['stream'] !== true) {
    return {
      kind: 'json',
      status: 200,
      body: {
        ...identity,
        object: 'chat.completion',
        choices: choices.map((choice) => ({
          index: choice.index,
          message: {
            role: 'assistant',
            content: choice.toolCall === null ? choice.sample.text : null,
            ...(isVllm ? { refusal: null, annotations: null, audio: null, function_call: null, reasoning: null } : {}),
            tool_calls: choice.toolCall === null ? [] : [wireToolCall(choice.toolCall)],
          },
          logprobs: logprobsOf(choice, 0, choice.sample.tokens.length),
          finish_reason: choice.finishReason,
          ...(isVllm ? { stop_reason: choice.stopReason, token_ids: withTokenIds ? choice.sample.tokens.map((token) => token.id) : null } : {}),
        })),
        ...(isVllm ? { service_tier: null, system_fingerprint: null } : { system_fingerprint: 'fp_ollama' }),
        usage: usage(promptIds.length, choices),
        ...(isVllm ? { prompt_logprobs: null, prompt_token_ids: withTokenIds ? promptIds : null, kv_transfer_params: null } : {}),
      },
    };
  }

  const chunk = (choice: unknown, extra: FakeBody = {}): unknown => ({ ...identity, object: 'chat.completion.chunk', choices: [choice], ...extra });
  const chunks: unknown[] = choices.map((choice) =>
    chunk(
      { index: choice.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      withTokenIds && choice.index === 0 ? { prompt_token_ids: promptIds } : {},
    ),
  );
  const longest = Math.max(...choices.map((choice) => choice.sample.tokens.length));
  const deltasByChoice = choices.map((choice) => streamedTextDeltas(choice.sample, stopStrings(body['stop'])));
  const argumentPiecesByChoice = choices.map((choice) =>
    choice.toolCall === null ? [] : splitText(choice.toolCall.arguments, Math.min(4, choice.sample.tokens.length - 2)),
  );
  for (let step = 0; step < longest; step += 1) {
    for (const choice of choices) {
      const token = choice.sample.tokens[step];
      if (token === undefined) continue;
      const isLast = step === choice.sample.tokens.length - 1;
      let delta: FakeBody = {};
      if (choice.toolCall !== null) {
        const pieces = argumentPiecesByChoice[choice.index] ?? [];
        if (step === 0) delta = { tool_calls: [{ index: 0, id: choice.toolCall.id, type: 'function', function: { name: choice.toolCall.name, arguments: '' } }] };
        else if (step <= pieces.length) delta = { tool_calls: [{ index: 0, function: { arguments: pieces[step - 1] } }] };
      } else {
        const text = deltasByChoice[choice.index]?.[step] ?? '';
        if (text !== '') delta = { content: text };
      }
      chunks.push(
        chunk({
          index: choice.index,
          delta,
          logprobs: logprobsOf(choice, step, step + 1),
          finish_reason: isLast ? choice.finishReason : null,
          ...(isVllm ? { stop_reason: isLast ? choice.stopReason : null } : {}),
          ...(withTokenIds ? { token_ids: [token.id] } : {}),
        }),
      );
    }
  }
  if (asRecord(body['stream_options'])['include_usage'] === true) {
    chunks.push({ ...identity, object: 'chat.completion.chunk', choices: [], usage: usage(promptIds.length, choices) });
  }
  return { kind: 'stream', chunks };
}

function promptIdsOf(prompt: unknown): number[] | null {
  if (typeof prompt === 'string') return encodeBytes(prompt);
  const ids = asArray(prompt);
  return ids.every((id) => typeof id === 'number' && Number.isInteger(id) && id >= 0) ? (ids as number[]) : null;
}

/** vLLM's `prompt_logprobs`: null first, then dicts keyed by stringified id (the actual id included). */
export function promptLogprobs(promptIds: readonly number[], topCount: number): unknown[] {
  return promptIds.map((id, position) => {
    const previous = promptIds[position - 1];
    if (previous === undefined) return null;
    const entries = fakeTopAlternatives(previous, id, Math.max(1, topCount));
    return Object.fromEntries(entries.map((entry, rank) => [String(entry.id), { logprob: entry.logprob, rank: rank + 1, decoded_token: tokenText(entry.id) }]));
  });
}

export function handleCompletions(body: FakeBody, context: FakeRouteContext): FakeResponse {
  const promptIds = promptIdsOf(body['prompt']);
  if (promptIds === null || promptIds.length === 0) return errorResponse(400, 'prompt must be a string or a list of token ids', 'BadRequestError', 'prompt');
  if (body['stream'] === true && body['prompt_logprobs'] !== undefined && body['prompt_logprobs'] !== null) {
    return errorResponse(400, 'prompt_logprobs is not supported with stream=True', 'BadRequestError', 'prompt_logprobs');
  }
  const sample = sampleReply(promptIds, 'You said: ', asNumber(body['max_tokens']) ?? 16, stopStrings(body['stop']));
  const topCount = asNumber(body['prompt_logprobs']);
  return {
    kind: 'json',
    status: 200,
    body: {
      id: `cmpl-${context.requestNumber}`,
      object: 'text_completion',
      created: context.created,
      model: context.model,
      choices: [
        {
          index: 0,
          text: sample.text,
          logprobs: null,
          finish_reason: sample.finish,
          stop_reason: typeof sample.matched === 'string' ? sample.matched : null,
          token_ids: body['return_token_ids'] === true ? sample.tokens.map((token) => token.id) : null,
          prompt_logprobs: topCount === undefined ? null : promptLogprobs(promptIds, topCount),
          prompt_token_ids: body['return_token_ids'] === true ? promptIds : null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: { prompt_tokens: promptIds.length, total_tokens: promptIds.length + sample.tokens.length, completion_tokens: sample.tokens.length, prompt_tokens_details: null },
      kv_transfer_params: null,
    },
  };
}

export function handleTokenize(body: FakeBody, context: FakeRouteContext): FakeResponse {
  const messages = asArray(body['messages']);
  const prompt = asString(body['prompt']);
  let tokens: number[];
  if (messages.length > 0) tokens = renderPromptIds(wireMessagesToTurns(messages), wireToolNames(body['tools']));
  else if (prompt !== undefined) tokens = encodeBytes(prompt);
  else return errorResponse(400, 'either messages or prompt is required', 'BadRequestError');
  return { kind: 'json', status: 200, body: { count: tokens.length, max_model_len: context.maxModelLength, tokens, token_strs: null } };
}
