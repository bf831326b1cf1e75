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
}

type LogprobTriple = [number | null, number, null];

export function handleGenerate(body: FakeBody, context: FakeGenerateContext): FakeResponse {
  const promptIds = asArray(body['input_ids']);
  if (promptIds.length === 0 || !promptIds.every((id): id is number => typeof id === 'number' && Number.isInteger(id) && id >= 0)) {
    return errorResponse(400, 'input_ids must be a non-empty list of token ids', 'BadRequestError', 'input_ids');
  }
  const samplingParams = asRecord(body['sampling_params']);
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
