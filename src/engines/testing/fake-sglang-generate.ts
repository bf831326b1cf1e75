/**
 * SGLang's native `POST /generate` on the fake server (engines.md §2.1). Streaming sends one
 * `data:` line per token with cumulative `text`, `output_ids` and `meta_info.output_token_logprobs`
 * (SGLang's default), or only the new ids and log-probs with `incrementalStreamOutput` (SGLang's
 * `--incremental-streaming-output`); `text` stays cumulative in both.
 */
import {
  fakeReply,
  fakeLogprob,
  fakeTopAlternatives,
  readPromptIds,
  sampleReply,
  streamedTextDeltas,
} from './fake-model.js';
import { asArray, asNumber, asRecord, errorResponse, previousIds, stopStrings, type FakeBody, type FakeResponse } from './fake-wire.js';

export interface FakeGenerateContext {
  requestNumber: number;
  incrementalStreamOutput: boolean;
  weightVersion: string;
  /** False: an SGLang older than its seeded sampler, whose `SamplingParams` has no `sampling_seed`. */
  samplingSeed: boolean;
}

/**
 * The keyword arguments SGLang's `SamplingParams` takes (sgl-project/sglang
 * `python/sglang/srt/sampling/sampling_params.py` @00c17caf: its API fields, then the internal ones
 * a struct also accepts). SGLang builds it as `SamplingParams(**sampling_params)`, so any other key,
 * such as OpenAI's `seed`, fails the request.
 */
const samplingParamKeys = new Set([
  'max_new_tokens', 'stop', 'stop_token_ids', 'stop_regex', 'temperature', 'top_p', 'top_k', 'min_p', 'frequency_penalty', 'presence_penalty',
  'repetition_penalty', 'min_new_tokens', 'n', 'json_schema', 'regex', 'ebnf', 'structural_tag', 'ignore_eos', 'skip_special_tokens',
  'spaces_between_special_tokens', 'no_stop_trim', 'custom_params', 'stream_interval', 'logit_bias', 'sampling_seed',
  'stop_strs', 'stop_regex_strs', 'stop_str_max_len', 'stop_regex_max_len', 'is_normalized',
]);

/** SGLang's answer to a key `SamplingParams` does not take: a msgspec struct's message, or a plain class's before it. */
function unexpectedSamplingKey(samplingParams: FakeBody, context: FakeGenerateContext): FakeResponse | null {
  const unknown = Object.keys(samplingParams).find((key) => !samplingParamKeys.has(key) || (key === 'sampling_seed' && !context.samplingSeed));
  if (unknown === undefined) return null;
  const message = context.samplingSeed ? `Unexpected keyword argument '${unknown}'` : `SamplingParams.__init__() got an unexpected keyword argument '${unknown}'`;
  return errorResponse(400, message, 'BadRequestError');
}

type LogprobTriple = [number | null, number, null];

export function handleGenerate(body: FakeBody, context: FakeGenerateContext): FakeResponse {
  const promptIds = asArray(body['input_ids']);
  if (promptIds.length === 0 || !promptIds.every((id): id is number => typeof id === 'number' && Number.isInteger(id) && id >= 0)) {
    return errorResponse(400, 'input_ids must be a non-empty list of token ids', 'BadRequestError', 'input_ids');
  }
  const samplingParams = asRecord(body['sampling_params']);
  const refusal = unexpectedSamplingKey(samplingParams, context);
  if (refusal !== null) return refusal;
  if ((asNumber(samplingParams['n']) ?? 1) !== 1) return errorResponse(400, 'the fake server samples n=1 per /generate request', 'BadRequestError', 'n');
  const maxNewTokens = asNumber(samplingParams['max_new_tokens']) ?? 128;
  const stops = stopStrings(samplingParams['stop']);
  const { lastUserText, toolNames } = readPromptIds(promptIds);
  const reply = fakeReply(lastUserText, toolNames, 0);
  const sample = sampleReply(promptIds, reply.text, maxNewTokens, stops);
  const returnLogprob = body['return_logprob'] === true;
  const topCount = asNumber(body['top_logprobs_num']) ?? 0;
  const logprobStart = asNumber(body['logprob_start_len']) ?? -1;
  const outputIds = sample.tokens.map((token) => token.id);
  const previous = previousIds(promptIds, sample.tokens);
  const outputLogprobs: LogprobTriple[] = sample.tokens.map((token) => [token.logprob, token.id, null]);
  const outputTop = sample.tokens.map((token, index) =>
    fakeTopAlternatives(previous[index] ?? 0, token.id, topCount).map((entry): LogprobTriple => [entry.logprob, entry.id, null]),
  );
  const inputPositions = logprobStart < 0 ? [] : promptIds.slice(logprobStart).map((_, offset) => logprobStart + offset);
  const inputLogprobs = inputPositions.map((position): LogprobTriple => {
    const id = promptIds[position] ?? 0;
    const before = promptIds[position - 1];
    return [before === undefined ? null : fakeLogprob(before, id), id, null];
  });
  const inputTop = inputPositions.map((position) => {
    const before = promptIds[position - 1];
    return before === undefined ? null : fakeTopAlternatives(before, promptIds[position] ?? 0, topCount).map((entry): LogprobTriple => [entry.logprob, entry.id, null]);
  });

  const finishReason = sample.finish === 'length' ? { type: 'length', length: maxNewTokens } : { type: 'stop', matched: sample.matched };
  const metaInfo = (count: number, from: number, finished: boolean): FakeBody => ({
    id: `fake-${context.requestNumber}`,
    finish_reason: finished ? finishReason : null,
    prompt_tokens: promptIds.length,
    weight_version: context.weightVersion,
    completion_tokens: count,
    cached_tokens: 0,
    ...(returnLogprob
      ? {
          input_token_logprobs: inputLogprobs,
          output_token_logprobs: outputLogprobs.slice(from, count),
          ...(topCount > 0 ? { input_top_logprobs: inputTop, output_top_logprobs: outputTop.slice(from, count) } : {}),
        }
      : {}),
  });

  if (body['stream'] !== true) {
    return { kind: 'json', status: 200, body: { text: sample.text, output_ids: outputIds, meta_info: metaInfo(outputIds.length, 0, true) } };
  }
  if (sample.tokens.length === 0) return { kind: 'stream', chunks: [{ text: '', output_ids: [], meta_info: metaInfo(0, 0, true) }] };
  const deltas = streamedTextDeltas(sample, stops);
  let text = '';
  return {
    kind: 'stream',
    chunks: sample.tokens.map((_, index) => {
      text += deltas[index] ?? '';
      const count = index + 1;
      const from = context.incrementalStreamOutput ? index : 0;
      return { text, output_ids: outputIds.slice(from, count), meta_info: metaInfo(count, from, count === sample.tokens.length) };
    }),
  };
}
