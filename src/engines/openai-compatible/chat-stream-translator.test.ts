import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { GenerateEvent } from '../../spec/inference-engine.js';
import { resultOf, toolCallsFromDeltas } from '../inference-engine.contract.js';
import { parseChatChunk } from './chat-completions-api.js';
import { ChatStreamTranslator } from './chat-stream-translator.js';
import { driveGeneration, type UpstreamEvent } from './generation-driver.js';
import { readServerSentEvents } from './server-sent-events.js';

/** Feeds a recorded stream in odd-sized pieces, as a network would. */
async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let start = 0; start < bytes.length; start += size) yield bytes.slice(start, start + size);
}

async function translate(data: AsyncIterable<string>, choiceCount = 1): Promise<GenerateEvent[]> {
  async function* source(): AsyncGenerator<UpstreamEvent> {
    const translator = new ChatStreamTranslator();
    for await (const payload of data) if (payload !== '[DONE]') yield* translator.push(parseChatChunk(payload));
  }
  const events: GenerateEvent[] = [];
  for await (const event of driveGeneration(source(), { choiceCount, policyVersion: 0, signal: new AbortController().signal })) events.push(event);
  return events;
}

async function fromFixture(name: string): Promise<GenerateEvent[]> {
  const bytes = await readFile(new URL(`./__fixtures__/${name}`, import.meta.url));
  return translate(readServerSentEvents(pieces(new Uint8Array(bytes), 37)));
}

async function* payloads(...items: unknown[]): AsyncGenerator<string> {
  for (const item of items) yield JSON.stringify(item);
}

describe('chat stream translation of recorded streams', () => {
  it('takes prompt ids, sampled ids and log-probs from a vLLM stream', async () => {
    const events = await fromFixture('vllm-chat-stream.chunks.txt');
    const result = resultOf(events);
    expect(result.promptTokenIds).toHaveLength(35);
    expect(result.promptTokenIds.slice(0, 3)).toEqual([151644, 8948, 198]);
    const [choice] = result.choices;
    expect(choice?.message.content).toBe('Hello! How can I help?');
    expect(choice?.responseTokenIds).toEqual([9707, 0, 2585, 646, 358, 1492, 30, 151645]);
    expect(choice?.logprobs[0]).toBe(-0.0312);
    expect(choice?.finishReason).toBe('stop');
    expect(result.trainable).toBe(true);
    expect(result.usage).toEqual({ promptTokens: 35, completionTokens: 8 });
    const firstTokens = events.find((event) => event.type === 'tokens');
    expect(firstTokens?.type === 'tokens' ? firstTokens.tokens[0] : undefined).toEqual({
      id: 9707,
      text: 'Hello',
      logprob: -0.0312,
      top: [
        { id: -1, text: 'Hello', logprob: -0.0312 },
        { id: -1, text: 'Hi', logprob: -3.5117 },
      ],
    });
  });

  it('rebuilds a vLLM tool call and keeps the ids of tokens the tool parser held back', async () => {
    const events = await fromFixture('vllm-chat-tools-stream.chunks.txt');
    const result = resultOf(events);
    const [choice] = result.choices;
    expect(choice?.toolCalls).toEqual([{ id: 'chatcmpl-tool-9c2e4f6a8b0d4c1e', name: 'get_weather', arguments: '{"city": "Paris"}' }]);
    expect(toolCallsFromDeltas(events, 0)).toEqual(choice?.toolCalls);
    expect(choice?.message.content).toBe('');
    expect(choice?.finishReason).toBe('tool_calls');
    expect(choice?.responseTokenIds).toHaveLength(22);
    expect(choice?.responseTokenIds[0]).toBe(151657);
    expect(result.trainable).toBe(true);
  });

  it('passes an Ollama stream through without ids: not trainable', async () => {
    const result = resultOf(await fromFixture('ollama-chat-stream.chunks.txt'));
    expect(result.choices[0]?.message.content).toBe('Hello! How can I help?');
    expect(result.trainable).toBe(false);
    expect(result.promptTokenIds).toEqual([]);
    expect(result.choices[0]?.responseTokenIds).toEqual([]);
  });
});

describe('chat stream translation edge cases', () => {
  it('interleaves n choices and ends each one', async () => {
    const events = await translate(
      payloads(
        { prompt_token_ids: [5], choices: [{ index: 0, delta: { content: 'a' } }, { index: 1, delta: { content: 'b' } }] },
        { choices: [{ index: 1, delta: { content: 'c' }, finish_reason: 'length' }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      ),
      2,
    );
    expect(resultOf(events).choices.map((choice) => [choice.message.content, choice.finishReason])).toEqual([
      ['a', 'stop'],
      ['bc', 'length'],
    ]);
  });

  it('reads ids spelled token_id:<id> and marks ids that do not pair with log-probs as inexact', async () => {
    const spelled = resultOf(
      await translate(payloads({ prompt_token_ids: [5], choices: [{ index: 0, delta: { content: 'x' }, logprobs: { content: [{ token: 'token_id:42', logprob: -1, top_logprobs: [{ token: 'token_id:43', logprob: -2 }] }] }, finish_reason: 'stop' }] })),
    );
    expect(spelled.choices[0]?.responseTokenIds).toEqual([42]);
    expect(spelled.trainable).toBe(true);
    const mismatched = resultOf(
      await translate(payloads({ prompt_token_ids: [5], choices: [{ index: 0, delta: { content: 'x' }, token_ids: [1, 2], logprobs: { content: [{ token: 'x', logprob: -1 }] }, finish_reason: 'stop' }] })),
    );
    expect(mismatched.trainable).toBe(false);
    expect(mismatched.choices[0]?.responseTokenIds).toEqual([]);
  });

  it('fails when the stream ends before every choice finished', async () => {
    await expect(translate(payloads({ choices: [{ index: 0, delta: { content: 'x' } }] }))).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('rejects a choice index beyond n and chunks of the wrong shape', async () => {
    await expect(translate(payloads({ choices: [{ index: 3, delta: { content: 'x' } }] }))).rejects.toMatchObject({ code: 'upstream_error' });
    expect(() => parseChatChunk('{"choices": [{"index": "zero"}]}')).toThrow(/unexpected stream chunk/);
    expect(() => parseChatChunk('{"choices": [')).toThrow(/malformed/);
  });
});
