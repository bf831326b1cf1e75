import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { GenerateEvent } from '../../spec/inference-engine.js';
import { resultOf } from '../inference-engine.contract.js';
import { encodeWords, endOfTurnTokenId, fakeLogprob } from '../testing/fake-model.js';
import { createTestChatRenderer } from '../testing/test-chat-renderer.js';
import { driveGeneration, type UpstreamEvent } from './generation-driver.js';
import { parseGenerateChunk, parseGenerateOutput, type GenerateOutput } from './sglang-api.js';
import { SglangChoiceTranslator } from './sglang-stream-translator.js';

/** A renderer for the Qwen ids of the recorded SGLang stream. */
function qwenFixtureRenderer(): ChatRenderer {
  const texts = new Map([
    [9707, 'Hello'],
    [0, '!'],
    [2585, ' How'],
  ]);
  const fake = createTestChatRenderer();
  return {
    ...fake,
    stopTokenIds: [151645],
    tokenText: (id) => texts.get(id) ?? (id === 151645 ? '<|im_end|>' : ''),
    createStreamDecoder: () => ({ push: (id) => texts.get(id) ?? '', finish: () => '' }),
  };
}

async function run(outputs: GenerateOutput[], renderer: ChatRenderer, stops: string[] = []): Promise<GenerateEvent[]> {
  async function* source(): AsyncGenerator<UpstreamEvent> {
    const translator = new SglangChoiceTranslator(renderer, 0, stops);
    yield { type: 'prompt', promptTokenIds: [7, 8] };
    for (const output of outputs) yield* translator.push(output);
  }
  const events: GenerateEvent[] = [];
  for await (const event of driveGeneration(source(), { choiceCount: 1, policyVersion: 2, signal: new AbortController().signal })) events.push(event);
  return events;
}

async function fixtureOutputs(): Promise<GenerateOutput[]> {
  const text = await readFile(new URL('./__fixtures__/sglang-generate-stream.chunks.txt', import.meta.url), 'utf8');
  return text
    .split('\n\n')
    .map((event) => event.replace(/^data: /, ''))
    .filter((data) => data !== '' && data !== '[DONE]')
    .map(parseGenerateChunk);
}

describe('SGLang /generate stream translation', () => {
  it('decodes a recorded cumulative stream into text, exact ids and log-probs', async () => {
    const result = resultOf(await run(await fixtureOutputs(), qwenFixtureRenderer()));
    expect(result.choices[0]?.message.content).toBe('Hello! How');
    expect(result.choices[0]?.responseTokenIds).toEqual([9707, 0, 2585, 151645]);
    expect(result.choices[0]?.logprobs).toEqual([-0.0312, -0.2014, -0.0871, -0.0011]);
    expect(result.choices[0]?.finishReason).toBe('stop');
    expect(result.trainable).toBe(true);
    expect(result.policyVersion).toBe(2);
  });

  it('gives the same result when SGLang streams only new ids per chunk', async () => {
    const cumulative = await fixtureOutputs();
    const incremental = cumulative.map((output, index) => ({
      ...output,
      outputIds: output.outputIds.slice(index),
      outputLogprobs: output.outputLogprobs.slice(index),
    }));
    const result = resultOf(await run(incremental, qwenFixtureRenderer()));
    expect(result.choices[0]?.responseTokenIds).toEqual([9707, 0, 2585, 151645]);
    expect(result.choices[0]?.message.content).toBe('Hello! How');
  });

  it('cuts a stop string the ids still spell and parses tool calls from decoded text', async () => {
    const renderer = createTestChatRenderer();
    const step = (ids: number[], finished: boolean): GenerateOutput => ({
      outputIds: ids,
      finishType: finished ? 'stop' : null,
      completionTokens: ids.length,
      promptTokens: 2,
      weightVersion: null,
      outputLogprobs: ids.map((id) => ({ logprob: fakeLogprob(0, id), id })),
      outputTop: [],
      inputLogprobs: [],
      inputTop: [],
    });
    const stopped = encodeWords('one two three');
    const cut = resultOf(await run([step(stopped.slice(0, 2), false), step(stopped, true)], renderer, ['two']));
    expect(cut.choices[0]?.message.content).toBe('one ');
    expect(cut.choices[0]?.responseTokenIds).toEqual(stopped);

    const call = [...encodeWords('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'), endOfTurnTokenId];
    const events = await run([step(call.slice(0, 5), false), step(call, true)], renderer);
    const result = resultOf(events);
    expect(result.choices[0]?.toolCalls).toEqual([{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(result.choices[0]?.message.content).toBe('');
    expect(result.choices[0]?.finishReason).toBe('tool_calls');
  });

  it('reads the recorded scoring answer: input log-probs with a null first entry and top alternatives', async () => {
    const json: unknown = JSON.parse(await readFile(new URL('./__fixtures__/sglang-generate.json', import.meta.url), 'utf8'));
    const output = parseGenerateOutput(json);
    expect(output.inputLogprobs.map((entry) => entry.id)).toEqual([77091, 198, 9707]);
    expect(Number.isNaN(output.inputLogprobs[0]?.logprob)).toBe(true);
    expect(output.inputLogprobs[2]?.logprob).toBe(-0.0312);
    expect(output.inputTop[2]).toEqual([
      { logprob: -0.0312, id: 9707 },
      { logprob: -3.5117, id: 13048 },
    ]);
    expect(output.finishType).toBe('length');
  });
});
