/**
 * The contract every `InferenceEngine` runs: event order, text/tool-call/token consistency
 * between the stream and the final result, sampling limits, abort, scoring, and `unsupported`
 * errors for what an engine declares it cannot do. Prompts are chosen so that both the fake
 * server and a real instruction-tuned model pass (live tests run the same suite).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSamplingOptions, type ChatMessage, type SamplingOptions, type ToolCall, type ToolDefinition } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type {
  EngineCapabilities,
  GenerateEvent,
  GenerateRequest,
  GenerateResult,
  InferenceEngine,
  PolicyArtifact,
} from '../spec/inference-engine.js';

export interface InferenceEngineContractOptions {
  name: string;
  createEngine: () => Promise<{ engine: InferenceEngine; close: () => Promise<void> }>;
  /** What the engine must declare; `toolCalls`: it reliably calls a tool when asked to. */
  capabilities: EngineCapabilities & { toolCalls: boolean };
  /** Largest accepted gap between scored and sampled log-probs; default 1e-4. */
  logprobTolerance?: number;
  /** A loadable artifact for the policy-loading checks (needed when `policyLoading`). */
  createPolicyArtifact?: (version: number) => PolicyArtifact;
  /** It implements `setPolicyArtifactSource` (serves versions it was never given). */
  takesArtifactSource?: boolean;
  /** It implements `pinPolicy`, holding this many adapter versions at once (with `takesArtifactSource`). */
  residentAdapters?: number;
}

const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

function user(content: string): ChatMessage[] {
  return [{ role: 'user', content }];
}

export function contractRequest(messages: ChatMessage[], sampling: Partial<SamplingOptions> = {}, extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return { messages, tools: [], toolChoice: 'auto', sampling: { ...defaultSamplingOptions, maxTokens: 48, ...sampling }, ...extra };
}

export async function collectEvents(engine: InferenceEngine, request: GenerateRequest, signal = new AbortController().signal): Promise<GenerateEvent[]> {
  const events: GenerateEvent[] = [];
  for await (const event of engine.generate(request, signal)) events.push(event);
  return events;
}

export function resultOf(events: GenerateEvent[]): GenerateResult {
  const last = events[events.length - 1];
  if (last?.type !== 'end') throw new Error(`the last event is ${last?.type ?? 'missing'}, not end`);
  return last.result;
}

/** Rebuilds each choice's tool calls from the stream's deltas alone. */
export function toolCallsFromDeltas(events: GenerateEvent[], choiceIndex: number): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type !== 'tool-call-delta' || event.choiceIndex !== choiceIndex) continue;
    const call = calls[event.toolCallIndex];
    if (call === undefined) calls[event.toolCallIndex] = { id: event.id ?? '', name: event.name ?? '', arguments: event.argumentsDelta };
    else call.arguments += event.argumentsDelta;
  }
  return calls;
}

function expectWellOrdered(events: GenerateEvent[], choiceCount: number): void {
  expect(events[0]?.type).toBe('start');
  expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
  expect(events.filter((event) => event.type === 'end')).toHaveLength(1);
  expect(events[events.length - 1]?.type).toBe('end');
  const ended = new Set<number>();
  for (const event of events) {
    if (event.type === 'start' || event.type === 'end') continue;
    expect(event.choiceIndex).toBeGreaterThanOrEqual(0);
    expect(event.choiceIndex).toBeLessThan(choiceCount);
    expect(ended.has(event.choiceIndex), `event after choice-end of choice ${event.choiceIndex}`).toBe(false);
    if (event.type === 'choice-end') ended.add(event.choiceIndex);
  }
  expect(ended.size).toBe(choiceCount);
}

function expectConsistent(events: GenerateEvent[], result: GenerateResult): void {
  const start = events[0];
  if (start?.type === 'start') {
    expect(start.promptTokenIds).toEqual(result.promptTokenIds);
    expect(start.policyVersion).toBe(result.policyVersion);
  }
  for (const choice of result.choices) {
    const text = events.map((event) => (event.type === 'text-delta' && event.choiceIndex === choice.index ? event.text : '')).join('');
    expect(choice.message.content).toBe(text);
    expect(choice.toolCalls).toEqual(toolCallsFromDeltas(events, choice.index));
    const finish = events.find((event) => event.type === 'choice-end' && event.choiceIndex === choice.index);
    expect(finish?.type === 'choice-end' ? finish.finishReason : undefined).toBe(choice.finishReason);
    if (result.trainable) {
      const tokens = events.flatMap((event) => (event.type === 'tokens' && event.choiceIndex === choice.index ? event.tokens : []));
      expect(tokens.map((token) => token.id)).toEqual(choice.responseTokenIds);
      expect(tokens.map((token) => token.logprob)).toEqual(choice.logprobs);
      expect(choice.logprobs.length).toBe(choice.responseTokenIds.length);
      for (const logprob of choice.logprobs) expect(logprob).toBeLessThanOrEqual(0);
    }
  }
  if (result.trainable) expect(result.promptTokenIds.length).toBeGreaterThan(0);
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(ClawrlError.isInstance(error), `expected a ClawrlError(${code}), got ${String(error)}`).toBe(true);
  expect(ClawrlError.isInstance(error) ? error.code : undefined).toBe(code);
}

export function runInferenceEngineContract(options: InferenceEngineContractOptions): void {
  const tolerance = options.logprobTolerance ?? 1e-4;
  const { capabilities } = options;

  describe(`InferenceEngine contract: ${options.name}`, () => {
    let engine: InferenceEngine;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ engine, close } = await options.createEngine());
    });
    afterAll(async () => {
      await close();
    });

    it('declares its capabilities', () => {
      expect(engine.capabilities).toEqual({
        tokenIds: capabilities.tokenIds,
        scoring: capabilities.scoring,
        temperatureScoring: capabilities.temperatureScoring,
        policyLoading: capabilities.policyLoading,
        forcedToolChoice: capabilities.forcedToolChoice,
        responseFormats: capabilities.responseFormats,
      });
      expect(engine.modelId).not.toBe('');
    });

    it('is healthy once created, if it checks its health at all', async () => {
      if (engine.checkHealth === undefined) return;
      expect(await engine.checkHealth(AbortSignal.timeout(5_000))).toEqual({ ok: true });
    });

    it('streams one start, per-choice events, one choice-end per choice and one end, consistent with the result', async () => {
      const events = await collectEvents(engine, contractRequest(user('Say hello to the world.'), { temperature: 0 }));
      expectWellOrdered(events, 1);
      const result = resultOf(events);
      expectConsistent(events, result);
      expect(result.choices).toHaveLength(1);
      expect(result.choices[0]?.message.content.length).toBeGreaterThan(0);
      expect(result.trainable).toBe(capabilities.tokenIds);
      expect(result.usage.completionTokens).toBeGreaterThan(0);
    });

    it('samples n choices', async () => {
      const events = await collectEvents(engine, contractRequest(user('Name a colour.'), { n: 2, temperature: 1, maxTokens: 16 }));
      expectWellOrdered(events, 2);
      const result = resultOf(events);
      expectConsistent(events, result);
      expect(result.choices.map((choice) => choice.index)).toEqual([0, 1]);
    });

    it('stops at max tokens with finish reason length', async () => {
      const events = await collectEvents(engine, contractRequest(user('Count from one to one hundred in words, separated by spaces.'), { maxTokens: 3, temperature: 0 }));
      const result = resultOf(events);
      expectConsistent(events, result);
      expect(result.choices[0]?.finishReason).toBe('length');
      if (result.trainable) expect(result.choices[0]?.responseTokenIds).toHaveLength(3);
    });

    it('cuts the text before a stop sequence', async () => {
      const events = await collectEvents(engine, contractRequest(user('Say exactly: one two three four five'), { stop: ['three'], temperature: 0 }));
      const result = resultOf(events);
      expectConsistent(events, result);
      expect(result.choices[0]?.message.content).not.toContain('three');
      expect(result.choices[0]?.finishReason).toBe('stop');
    });

    it('streams tool calls that rebuild into the final tool calls', async () => {
      const request = contractRequest(user('What is the weather in Paris right now?'), { temperature: 0, maxTokens: 128 }, { tools: [weatherTool] });
      const events = await collectEvents(engine, request);
      expectWellOrdered(events, 1);
      const result = resultOf(events);
      expectConsistent(events, result);
      if (!capabilities.toolCalls) return;
      const [call] = result.choices[0]?.toolCalls ?? [];
      expect(call?.name).toBe('get_weather');
      expect(call?.id).not.toBe('');
      expect(() => JSON.parse(call?.arguments ?? '') as unknown).not.toThrow();
      expect(result.choices[0]?.finishReason).toBe('tool_calls');
      expect(result.choices[0]?.message.toolCalls).toEqual(result.choices[0]?.toolCalls);
    });

    it('ends early with aborted choices when the signal aborts', async () => {
      const controller = new AbortController();
      const long = `Repeat these words back to me: ${'one two three four five '.repeat(60)}`;
      // Greedy, so the reply cannot end on its own before the abort lands: sampled at temperature 1, the
      // local tests' random-weights model sometimes ended after 62 tokens, faster than the abort reached its worker.
      const events: GenerateEvent[] = [];
      let threw: unknown = null;
      try {
        for await (const event of engine.generate(contractRequest(user(long), { maxTokens: 400, temperature: 0 }), controller.signal)) {
          events.push(event);
          if (event.type === 'text-delta' || event.type === 'tokens') controller.abort();
        }
      } catch (error) {
        threw = error;
      }
      if (threw !== null) {
        expect((threw as Error).name).toBe('AbortError');
        return;
      }
      expectWellOrdered(events, 1);
      const result = resultOf(events);
      expect(result.choices[0]?.finishReason).toBe('aborted');
      expect(result.choices[0]?.message.content.length ?? 0).toBeLessThan(long.length);
    });

    it.runIf(capabilities.scoring)('scores a sampled response with the log-probs it was sampled with', async () => {
      const messages = user('Say hello to the world.');
      const result = resultOf(await collectEvents(engine, contractRequest(messages, { temperature: 1, maxTokens: 12 })));
      const choice = result.choices[0];
      expect(result.trainable).toBe(true);
      if (choice === undefined) throw new Error('no choice');
      const scored = await engine.score({ prompt: { tokenIds: result.promptTokenIds }, responseTokenIds: choice.responseTokenIds });
      expect(scored.promptTokenIds).toEqual(result.promptTokenIds);
      expect(scored.logprobs).toHaveLength(choice.logprobs.length);
      scored.logprobs.forEach((logprob, position) => expect(Math.abs(logprob - (choice.logprobs[position] ?? 0))).toBeLessThanOrEqual(tolerance));

      const fromMessages = await engine.score({ prompt: { messages }, responseTokenIds: choice.responseTokenIds, topK: 2 });
      expect(fromMessages.promptTokenIds).toEqual(result.promptTokenIds);
      expect(fromMessages.top).toHaveLength(choice.responseTokenIds.length);
      for (const alternatives of fromMessages.top ?? []) {
        expect(alternatives.length).toBeGreaterThan(0);
        expect(alternatives.length).toBeLessThanOrEqual(2);
      }
    });

    it.runIf(capabilities.temperatureScoring)('scores a reply sampled at a temperature under that temperature', async () => {
      const messages = user('Say hello to the world.');
      const result = resultOf(await collectEvents(engine, contractRequest(messages, { temperature: 0.5, maxTokens: 12 })));
      const choice = result.choices[0];
      if (choice === undefined) throw new Error('no choice');
      const prompt = { tokenIds: result.promptTokenIds };
      const tempered = await engine.score({ prompt, responseTokenIds: choice.responseTokenIds, temperature: 0.5 });
      tempered.logprobs.forEach((logprob, position) => expect(Math.abs(logprob - (choice.logprobs[position] ?? 0))).toBeLessThanOrEqual(tolerance));
      const plain = await engine.score({ prompt, responseTokenIds: choice.responseTokenIds });
      expect(plain.logprobs.some((logprob, position) => Math.abs(logprob - (tempered.logprobs[position] ?? 0)) > tolerance)).toBe(true);
    });

    it.runIf(!capabilities.scoring)('rejects scoring as unsupported', async () => {
      await expectCode(engine.score({ prompt: { tokenIds: [1, 2, 3] }, responseTokenIds: [4] }), 'unsupported');
    });

    it.runIf(!capabilities.policyLoading)('rejects policy loading and unknown policy versions as unsupported', async () => {
      await expectCode(engine.loadPolicy({ version: 1, kind: 'adapter', files: {} }), 'unsupported');
      await expectCode(collectEvents(engine, contractRequest(user('Hello'), {}, { policyVersion: 7 })), 'unsupported');
    });

    it.runIf(capabilities.policyLoading && options.createPolicyArtifact !== undefined)('serves a loaded policy version and still serves pinned older ones', async () => {
      const artifact = options.createPolicyArtifact?.(1);
      if (artifact === undefined) throw new Error('no artifact');
      await engine.loadPolicy(artifact);
      const current = resultOf(await collectEvents(engine, contractRequest(user('Hello'), { maxTokens: 8 })));
      expect(current.policyVersion).toBe(1);
      const pinned = resultOf(await collectEvents(engine, contractRequest(user('Hello'), { maxTokens: 8 }, { policyVersion: 0 })));
      expect(pinned.policyVersion).toBe(0);
    });

    it.runIf(options.takesArtifactSource === true && options.createPolicyArtifact !== undefined)('serves a version it was never given from its artifact source', async () => {
      const asked: number[] = [];
      expect(engine.setPolicyArtifactSource).toBeTypeOf('function');
      engine.setPolicyArtifactSource?.(async (version) => {
        asked.push(version);
        return version === 5 ? (options.createPolicyArtifact?.(5) ?? null) : null;
      });
      const fetched = resultOf(await collectEvents(engine, contractRequest(user('Hello'), { maxTokens: 8 }, { policyVersion: 5 })));
      expect(fetched.policyVersion).toBe(5);
      expect(asked).toContain(5);
      await expectCode(collectEvents(engine, contractRequest(user('Hello'), { maxTokens: 8 }, { policyVersion: 6 })), 'not_found');
    });

    const pinsRun = options.residentAdapters !== undefined && options.takesArtifactSource === true && options.createPolicyArtifact !== undefined;
    it.runIf(pinsRun)('keeps a pinned version loaded while more versions than it holds come and go, and refuses pins beyond its room', async () => {
      const capacity = options.residentAdapters ?? 0;
      const versions = Array.from({ length: capacity + 2 }, (_, index) => 20 + index);
      const fetched: number[] = [];
      engine.setPolicyArtifactSource?.(async (version) => {
        fetched.push(version);
        return versions.includes(version) ? (options.createPolicyArtifact?.(version) ?? null) : null;
      });
      const [pinned = 20, ...others] = versions;
      const ask = async (version: number) => resultOf(await collectEvents(engine, contractRequest(user('Hello'), { maxTokens: 4 }, { policyVersion: version }))).policyVersion;
      await engine.pinPolicy?.(pinned);
      for (const version of others) expect(await ask(version)).toBe(version);
      const fetches = fetched.length;
      // Served without a load: a load would have fetched its artifact again.
      expect(await ask(pinned)).toBe(pinned);
      expect(fetched).toHaveLength(fetches);
      // Callers may pin all but two slots: one stays for the active version, one for the rest.
      const room = others.slice(0, capacity - 3);
      for (const version of room) await engine.pinPolicy?.(version);
      await expectCode(engine.pinPolicy?.(others[capacity - 3] ?? 0) ?? Promise.resolve(), 'unsupported');
      for (const version of [pinned, ...room]) await engine.unpinPolicy?.(version);
    });
  });
}
