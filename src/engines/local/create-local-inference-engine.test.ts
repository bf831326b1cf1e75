import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInferenceEngineContract } from '../inference-engine.contract.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { constrainedPartsOf, createOutputConstraint } from '../../model/output-constraint.js';
import type { GenerateResult } from '../../spec/inference-engine.js';
import { createLocalInferenceEngine } from './create-local-inference-engine.js';
import { createTinyAdapterFiles, createTinyModelFolder } from './testing/create-tiny-model-folder.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'sampler-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
afterAll(() => rmSync(folder, { recursive: true, force: true }));

runInferenceEngineContract({
  name: 'local (worker thread, wasm)',
  createEngine: async () => {
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, maxResidentAdapters: 4 });
    return { engine, close: () => engine.close() };
  },
  capabilities: { tokenIds: true, scoring: true, temperatureScoring: true, policyLoading: true, forcedToolChoice: true, responseFormats: ['json_object', 'json_schema'], toolCalls: false },
  createPolicyArtifact: (version) => ({ version, kind: 'adapter', files: createTinyAdapterFiles(folder, version) }),
  takesArtifactSource: true,
  residentAdapters: 4,
});

describe('local engine', () => {
  it('refuses prompts longer than the context with context_length_exceeded', async () => {
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl });
    try {
      const request = {
        messages: [{ role: 'user' as const, content: 'word '.repeat(2000) }],
        tools: [],
        toolChoice: 'auto' as const,
        sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 8 },
      };
      await expect(async () => {
        for await (const _event of engine.generate(request, new AbortController().signal)) {
          // drain
        }
      }).rejects.toMatchObject({ code: 'context_length_exceeded' });
    } finally {
      await engine.close();
    }
  });

  it('fits a prompt longer than the context when asked, and scores the same messages against the same fitted prompt', async () => {
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, fitPrompts: true });
    try {
      const messages = [
        { role: 'system' as const, content: 'rule '.repeat(3000) },
        ...Array.from({ length: 40 }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `message ${index} `.repeat(20) })),
        { role: 'user' as const, content: 'the last question' },
      ];
      const request = { messages, tools: [], toolChoice: 'auto' as const, sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 8, seed: 3 } };
      let promptTokenIds: number[] = [];
      let responseTokenIds: number[] = [];
      for await (const event of engine.generate(request, new AbortController().signal)) {
        if (event.type === 'end') {
          promptTokenIds = event.result.promptTokenIds;
          responseTokenIds = event.result.choices[0]?.responseTokenIds ?? [];
        }
      }
      expect(promptTokenIds.length).toBeGreaterThan(0);
      expect(promptTokenIds.length).toBeLessThanOrEqual((engine.contextLength ?? 0) / 2);
      const scored = await engine.score({ prompt: { messages }, responseTokenIds });
      expect(scored.promptTokenIds).toEqual(promptTokenIds);
    } finally {
      await engine.close();
    }
  });

  it('forces a named tool call and a JSON object by constrained decoding, recording the model\'s own log-probs', async () => {
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl });
    const renderer = await loadChatRenderer(folder);
    try {
      const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
      const asks = [
        { toolChoice: { name: 'get_weather' } as const, responseFormat: undefined },
        { toolChoice: 'auto' as const, responseFormat: { type: 'json_object' as const } },
        { toolChoice: 'auto' as const, responseFormat: { type: 'json_schema' as const, name: 'forecast', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
      ];
      const pattern = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], toolChoice: 'auto' as const, responseFormat: { type: 'json_schema' as const, name: 'x', schema: { type: 'string', pattern: '^a' } }, sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 8 } };
      await expect(async () => {
        for await (const _event of engine.generate(pattern, new AbortController().signal)) {
          // drain
        }
      }).rejects.toMatchObject({ code: 'unsupported', param: 'response_format' });
      for (const ask of asks) {
        for (const seed of [1, 2, 3]) {
          const request = {
            messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
            tools,
            toolChoice: ask.toolChoice,
            ...(ask.responseFormat === undefined ? {} : { responseFormat: ask.responseFormat }),
            sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 60, seed },
          };
          let result: GenerateResult | undefined;
          for await (const event of engine.generate(request, new AbortController().signal)) if (event.type === 'end') result = event.result;
          const choice = result?.choices[0];
          if (choice === undefined || result === undefined) throw new Error('no choice');
          // Every sampled token kept the reply inside the constraint.
          const constraint = createOutputConstraint(constrainedPartsOf(request)!, Array.from({ length: renderer.vocabularySize }, (_, id) => renderer.tokenText(id)), renderer.stopTokenIds);
          const text = choice.responseTokenIds.filter((id) => !renderer.stopTokenIds.includes(id)).map((id) => renderer.tokenText(id)).join('');
          const head = ask.responseFormat === undefined ? '<tool_call>\n{"name": "get_weather", "arguments": ' : '';
          expect(text.startsWith(head) || head.startsWith(text), text).toBe(true);
          for (const id of choice.responseTokenIds) {
            expect(constraint.allowedTokens()[id], text).toBe(1);
            constraint.advance(id);
          }
          if (choice.finishReason === 'tool_calls') expect(choice.toolCalls[0]?.name).toBe('get_weather');
          else if (choice.finishReason === 'stop') expect(typeof JSON.parse(choice.message.content)).toBe('object');
          else expect(choice.finishReason).toBe('length');
          if (ask.responseFormat?.type === 'json_schema' && choice.finishReason === 'stop') expect(typeof (JSON.parse(choice.message.content) as { ok: unknown }).ok).toBe('boolean');
          // The recorded log-probs are the model's own: scoring the reply gives them back.
          const scored = await engine.score({ prompt: { tokenIds: result.promptTokenIds }, responseTokenIds: choice.responseTokenIds });
          scored.logprobs.forEach((logprob, index) => expect(logprob).toBeCloseTo(choice.logprobs[index] ?? Number.NaN, 3));
        }
      }
    } finally {
      await engine.close();
    }
  });

  it('is healthy once loaded and until it is closed', async () => {
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl });
    const signal = AbortSignal.timeout(2_000);
    expect(await engine.checkHealth?.(signal)).toEqual({ ok: true });
    await engine.close();
    expect(await engine.checkHealth?.(signal)).toEqual({ ok: false, reason: 'the local engine is closed' });
  });

  it('serves version 0 from the base weights beside trained full weights (the frozen judge asks for it)', async () => {
    const trained = createTinyModelFolder({ seed: 99 });
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl });
    try {
      const request = { prompt: { tokenIds: [1, 2, 3] }, responseTokenIds: [4, 5, 6] };
      const base = (await engine.score(request)).logprobs;
      await engine.loadPolicy({ version: 1, kind: 'full', files: { 'model.safetensors': readFileSync(path.join(trained, 'model.safetensors')) } });
      const active = (await engine.score(request)).logprobs;
      expect(active).not.toEqual(base);
      expect((await engine.score({ ...request, policyVersion: 0 })).logprobs).toEqual(base);
      // The base model stays beside the trained one: the active version is untouched.
      expect((await engine.score(request)).logprobs).toEqual(active);
    } finally {
      await engine.close();
      rmSync(trained, { recursive: true, force: true });
    }
  });

  it('reports a clear error for a missing model folder', async () => {
    await expect(createLocalInferenceEngine({ modelDirectory: '/nonexistent/model', modelId: 'x', workerUrl })).rejects.toMatchObject({
      code: 'configuration_error',
    });
  });
});
