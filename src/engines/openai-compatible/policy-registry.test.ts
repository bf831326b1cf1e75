import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine, PolicyArtifact } from '../../spec/inference-engine.js';
import { collectEvents, contractRequest, resultOf } from '../inference-engine.contract.js';
import { createPeftAdapterFiles } from '../testing/create-peft-adapter-files.js';
import { startFakeVllmServer, type FakeVllmServer, type FakeVllmServerOptions } from '../testing/fake-vllm-server.js';
import { createTestChatRenderer } from '../testing/test-chat-renderer.js';
import { writeSafetensors } from '../../model/safetensors.js';
import { createOpenAICompatibleEngine, type OpenAICompatibleEngineOptions } from './create-openai-compatible-engine.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function temporaryDirectory(prefix: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

async function setUp(
  serverOptions: FakeVllmServerOptions = {},
  engineOptions: Partial<OpenAICompatibleEngineOptions> = {},
): Promise<{ server: FakeVllmServer; engine: InferenceEngine; adapterDirectory: string }> {
  const server = await startFakeVllmServer(serverOptions);
  const adapterDirectory = await temporaryDirectory('clawrl-adapters-');
  const engine = createOpenAICompatibleEngine({
    baseUrl: server.url,
    model: 'fake-model',
    flavor: serverOptions.mode === 'sglang' ? 'sglang' : 'vllm',
    timeoutMs: 2000,
    adapterDirectory,
    ...(serverOptions.mode === 'sglang' ? { renderer: createTestChatRenderer() } : {}),
    ...engineOptions,
  });
  cleanups.push(async () => {
    await engine.close();
    await server.close();
  });
  return { server, engine, adapterDirectory };
}

/** A LoRA version as the trainer publishes it: it names the model as clawrl serves it, not as the upstream does. */
const adapter = (version: number): PolicyArtifact => ({ version, kind: 'adapter', files: createPeftAdapterFiles({ baseModel: 'served-name', seed: version }) });
const hello = contractRequest([{ role: 'user', content: 'Hello there' }]);

async function failure(promise: Promise<unknown>): Promise<ClawrlError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ClawrlError.isInstance(error)) throw new Error(`expected a ClawrlError, got ${String(error)}`);
  return error;
}

function loadedName(server: FakeVllmServer, version: number): string {
  const name = [...server.adapters.keys()].find((candidate) => candidate.startsWith(`fake-model-v${version}-`));
  if (name === undefined) throw new Error(`version ${version} is not loaded: ${[...server.adapters.keys()].join(', ')}`);
  return name;
}

describe('policy registry: LoRA versions on vLLM and SGLang', () => {
  it('writes a PEFT folder naming the upstream model, loads it under a versioned name and serves new requests with it', async () => {
    const { engine, server, adapterDirectory } = await setUp();
    await engine.loadPolicy(adapter(3));
    const name = loadedName(server, 3);
    expect(server.requests[0]).toMatchObject({ path: '/v1/load_lora_adapter', body: { lora_name: name, lora_path: join(adapterDirectory, name) } });
    const config = JSON.parse(await readFile(join(adapterDirectory, name, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ base_model_name_or_path: 'fake-model', peft_type: 'LORA', r: 4 });
    // Nothing half-written is left beside it.
    expect(await readdir(adapterDirectory)).toEqual([name]);
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(3);
    expect(server.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', served: name });
    await expect(failure(collectEvents(engine, contractRequest([{ role: 'user', content: 'x' }], {}, { policyVersion: 2 })))).resolves.toMatchObject({ code: 'not_found' });
  });

  it('serves a request pinned to a loaded older version under that version\'s adapter name, and the base model for 0', async () => {
    const { engine, server } = await setUp();
    await engine.loadPolicy(adapter(1));
    await engine.loadPolicy(adapter(2));
    const pinned = (version: number) => contractRequest([{ role: 'user', content: 'pinned' }], {}, { policyVersion: version });
    expect(resultOf(await collectEvents(engine, pinned(1))).policyVersion).toBe(1);
    expect(server.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', served: loadedName(server, 1) });
    expect(resultOf(await collectEvents(engine, pinned(0))).policyVersion).toBe(0);
    expect(server.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', served: 'fake-model' });
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(2);
    expect(server.requests.at(-1)?.served).toBe(loadedName(server, 2));
  });

  it('keeps serving the previous version when the server refuses a load, and loads it when asked again', async () => {
    const { engine, server } = await setUp();
    await engine.loadPolicy(adapter(1));
    server.failNextLoads(1);
    const refused = await failure(engine.loadPolicy(adapter(2)));
    expect(refused.message).toContain('fake load failure');
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
    expect(server.requests.at(-1)?.served).toBe(loadedName(server, 1));
    await engine.loadPolicy(adapter(2));
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(2);
  });

  it('treats an adapter another process loaded under the same name as loaded', async () => {
    const { engine, server, adapterDirectory } = await setUp();
    const other = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000, adapterDirectory });
    cleanups.push(() => other.close());
    await other.loadPolicy(adapter(1));
    await engine.loadPolicy(adapter(1));
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
    expect(server.adapters.size).toBe(1);
  });

  it('unloads the least recently used idle adapter to make room, and a rollback loads an unloaded one again', async () => {
    const { engine, server, adapterDirectory } = await setUp({}, { maxLoadedAdapters: 2 });
    for (const version of [1, 2, 3, 4]) await engine.loadPolicy(adapter(version));
    await server.settled();
    expect([...server.adapters.keys()].map((name) => name.split('-')[2]).sort()).toEqual(['v3', 'v4']);
    expect((await readdir(adapterDirectory)).length).toBe(2);
    await engine.loadPolicy(adapter(1));
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
    expect(server.requests.at(-1)?.served).toBe(loadedName(server, 1));
  });

  it('never unloads an adapter a request still streams from: a request for another version waits for its slot', async () => {
    const { engine, server } = await setUp({ tokensPerSecond: 2000 }, { maxLoadedAdapters: 2 });
    engine.setPolicyArtifactSource?.(async (version) => (version <= 3 ? adapter(version) : null));
    await engine.loadPolicy(adapter(1));
    const release = server.holdStreams();
    const events = engine.generate(hello, new AbortController().signal)[Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ type: 'start', policyVersion: 1 });
    // Version 1 streams and version 3 is active (pinned): a request for version 2 finds no slot to free.
    await engine.loadPolicy(adapter(2));
    await engine.loadPolicy(adapter(3));
    const first = loadedName(server, 1);
    const waiting = collectEvents(engine, contractRequest([{ role: 'user', content: 'pinned' }], {}, { policyVersion: 2 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.adapters.has(first)).toBe(true);
    expect(server.requests.filter((recorded) => recorded.path === '/v1/unload_lora_adapter').map((recorded) => (recorded.body as { lora_name: string }).lora_name)).not.toContain(first);
    release();
    const rest: unknown[] = [];
    for (let next = await events.next(); next.done !== true; next = await events.next()) rest.push(next.value);
    expect(rest.at(-1)).toMatchObject({ type: 'end', result: { policyVersion: 1 } });
    expect(resultOf(await waiting).policyVersion).toBe(2);
    await server.settled();
    expect([...server.adapters.keys()].sort()).toEqual([loadedName(server, 2), loadedName(server, 3)].sort());
  });

  it('stages a candidate under its own name: requests naming it reach it, every other request keeps the served version until it is promoted', async () => {
    for (const mode of ['vllm', 'sglang'] as const) {
      const { engine, server } = await setUp({ mode });
      await engine.loadPolicy(adapter(1));
      if (engine.stagePolicy === undefined) throw new Error('the openai-compatible engine stages versions');
      await engine.stagePolicy(adapter(2));
      const candidate = loadedName(server, 2);
      const served = loadedName(server, 1);
      const generationPaths = new Set(['/v1/chat/completions', '/generate']);
      const servedWith = () => server.requests.filter((recorded) => generationPaths.has(recorded.path)).map((recorded) => recorded.served ?? (recorded.body as { lora_path?: string }).lora_path);
      // A user's request (no version named) is served the active version, never the candidate.
      expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
      expect(servedWith()).toEqual([served]);
      // The gate's request names the candidate.
      expect(resultOf(await collectEvents(engine, contractRequest([{ role: 'user', content: 'gate' }], {}, { policyVersion: 2 }))).policyVersion).toBe(2);
      expect(servedWith()).toEqual([served, candidate]);
      // Promotion serves the staged adapter without loading it again.
      const loads = server.requests.filter((recorded) => recorded.path.endsWith('load_lora_adapter')).length;
      await engine.loadPolicy(adapter(2));
      expect(server.requests.filter((recorded) => recorded.path.endsWith('load_lora_adapter'))).toHaveLength(loads);
      expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(2);
      expect(servedWith().at(-1)).toBe(candidate);
    }
  });

  it('serves more versions than the server holds, concurrently, with no failed request and never more adapters loaded than its limit', async () => {
    for (const mode of ['vllm', 'sglang'] as const) {
      const limit = 3;
      const { engine, server, adapterDirectory } = await setUp({ mode, tokensPerSecond: 4000, maxLoadedAdapters: limit }, { maxLoadedAdapters: limit });
      const fetched: number[] = [];
      engine.setPolicyArtifactSource?.(async (version) => {
        fetched.push(version);
        return version >= 1 && version <= 8 ? adapter(version) : null;
      });
      await engine.loadPolicy(adapter(1));
      const versions = Array.from({ length: 24 }, (_, index) => 1 + (index % 8));
      // Each version asks for its own number of tokens, so the server's record says which version a request came from.
      const results = await Promise.all(versions.map((version) => collectEvents(engine, contractRequest([{ role: 'user', content: 'a story' }], { maxTokens: 4 + version }, { policyVersion: version }))));
      expect(results.map((events) => resultOf(events).policyVersion)).toEqual(versions);
      const generations = server.requests.filter((recorded) => recorded.path === '/v1/chat/completions' || recorded.path === '/generate');
      expect(generations).toHaveLength(versions.length);
      for (const recorded of generations) {
        const body = recorded.body as { max_tokens?: number; lora_path?: string; sampling_params?: { max_new_tokens?: number } };
        const version = (body.max_tokens ?? body.sampling_params?.max_new_tokens ?? 0) - 4;
        expect(mode === 'sglang' ? body.lora_path : recorded.served).toMatch(new RegExp(`^fake-model-v${version}-`));
      }
      await server.settled();
      expect(server.peakAdapters).toBeLessThanOrEqual(limit);
      expect(server.peakAdapters).toBe(limit);
      // vLLM never had to read an adapter's folder again: clawrl kept no more registered than it caches.
      expect(server.diskReloads).toBe(0);
      expect((await readdir(adapterDirectory)).length).toBeLessThanOrEqual(limit);
      expect(fetched.length).toBeGreaterThan(7);
    }
  });

  it('ends the requests still waiting for a slot when the engine closes, rather than leaving them hanging', async () => {
    const { engine, server } = await setUp({ tokensPerSecond: 2000 }, { maxLoadedAdapters: 2 });
    engine.setPolicyArtifactSource?.(async (version) => (version <= 3 ? adapter(version) : null));
    await engine.loadPolicy(adapter(1));
    const release = server.holdStreams();
    const streaming = engine.generate(contractRequest([{ role: 'user', content: 'x' }], {}, { policyVersion: 2 }), new AbortController().signal)[Symbol.asyncIterator]();
    expect((await streaming.next()).value).toMatchObject({ type: 'start', policyVersion: 2 });
    const waiting = collectEvents(engine, contractRequest([{ role: 'user', content: 'y' }], {}, { policyVersion: 3 })).then(
      () => 'served',
      () => 'ended',
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    await engine.close();
    expect(await waiting).toBe('ended');
    release();
  });

  it('keeps the active version and pinned ones loaded, refuses a pin beyond the room, and lets an unpinned one go', async () => {
    const { engine, server } = await setUp({ maxLoadedAdapters: 3 }, { maxLoadedAdapters: 3 });
    engine.setPolicyArtifactSource?.(async (version) => (version <= 6 ? adapter(version) : null));
    await engine.loadPolicy(adapter(1));
    await engine.pinPolicy?.(2);
    expect((await failure(engine.pinPolicy?.(3) ?? Promise.resolve())).message).toContain('callers may pin at most 1 versions with --upstream-max-loras 3');
    for (const version of [3, 4, 5, 6]) expect(resultOf(await collectEvents(engine, contractRequest([{ role: 'user', content: 'x' }], {}, { policyVersion: version }))).policyVersion).toBe(version);
    await server.settled();
    const held = () => [...server.adapters.keys()].map((name) => name.split('-')[2]).sort();
    expect(held()).toEqual(['v1', 'v2', 'v6']);
    await engine.unpinPolicy?.(2);
    await collectEvents(engine, contractRequest([{ role: 'user', content: 'x' }], {}, { policyVersion: 3 }));
    await server.settled();
    expect(held()).toEqual(['v1', 'v3', 'v6']);
  });

  it('loads SGLang adapters through /load_lora_adapter and selects them with lora_path', async () => {
    const { engine, server } = await setUp({ mode: 'sglang' });
    await engine.loadPolicy(adapter(1));
    await collectEvents(engine, hello);
    expect(server.requests.map((recorded) => recorded.path)).toEqual(['/load_lora_adapter', '/generate']);
    expect(server.requests[1]?.body).toMatchObject({ lora_path: loadedName(server, 1) });
  });

  it('reports an SGLang load failure in its own words and keeps the base model', async () => {
    const { engine, server } = await setUp({ mode: 'sglang' });
    const broken: PolicyArtifact = { version: 1, kind: 'adapter', files: { ...adapter(1).files, 'adapter_model.safetensors': new Uint8Array([1, 2, 3]) } };
    expect((await failure(engine.loadPolicy(broken))).message).toMatch(/sglang answered \/load_lora_adapter with HTTP 400: Failed to load LoRA adapter .*safetensors/);
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(0);
    expect(server.requests.at(-1)?.served).toBe('fake-model');
  });

  it('sends SGLang\'s admin key to its LoRA routes, which refuse the API key once the server has both', async () => {
    const keys = { mode: 'sglang' as const, apiKey: 'user-key', adminApiKey: 'admin-key' };
    const { engine: userOnly } = await setUp(keys, { apiKey: 'user-key' });
    expect((await failure(userOnly.loadPolicy(adapter(1)))).message).toContain('sglang answered /load_lora_adapter with HTTP 401');
    expect(resultOf(await collectEvents(userOnly, hello)).policyVersion).toBe(0);

    const { engine, server } = await setUp(keys, { apiKey: 'user-key', adminApiKey: 'admin-key' });
    await engine.loadPolicy(adapter(1));
    await engine.loadPolicy(adapter(2));
    await engine.loadPolicy(adapter(3));
    await engine.loadPolicy(adapter(4));
    await engine.loadPolicy(adapter(5));
    // Generation takes the API key: SGLang's admin key does not open its normal routes when both are set.
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(5);
    expect(server.requests.map((recorded) => recorded.path)).toContain('/unload_lora_adapter');
    expect([...server.adapters.keys()]).toHaveLength(4);
  });

  it('refuses loading without an adapter directory, and full weights on vLLM, as unsupported', async () => {
    const { engine } = await setUp();
    expect((await failure(engine.loadPolicy({ version: 1, kind: 'full', files: {} }))).message).toContain('--train-params lora');
    const { engine: withoutDirectory } = await setUp({}, { adapterDirectory: undefined });
    expect(withoutDirectory.capabilities.policyLoading).toBe(false);
    expect((await failure(withoutDirectory.loadPolicy(adapter(1)))).code).toBe('unsupported');
  });
});

describe('policy registry: full-weight versions on SGLang', () => {
  async function modelFolder(): Promise<string> {
    const folder = await temporaryDirectory('clawrl-model-');
    await writeFile(join(folder, 'config.json'), JSON.stringify({ model_type: 'llama', hidden_size: 8 }));
    await writeFile(join(folder, 'tokenizer.json'), '{}');
    await writeFile(join(folder, 'model.safetensors'), writeSafetensors(new Map([['lm_head.weight', { shape: [2, 2], data: new Float32Array(4) }]])));
    return folder;
  }
  const full = (version: number): PolicyArtifact => ({
    version,
    kind: 'full',
    files: { 'model.safetensors': writeSafetensors(new Map([['lm_head.weight', { shape: [2, 2], data: Float32Array.of(version, 0, 0, 0) }]])) },
  });

  it('writes a model folder, updates the weights from it and tags answers with the weight version', async () => {
    const modelDirectory = await modelFolder();
    const { engine, server, adapterDirectory } = await setUp({ mode: 'sglang', model: modelDirectory }, { model: modelDirectory, modelDirectory });
    await engine.loadPolicy(full(1));
    const [folder] = await readdir(adapterDirectory);
    expect((await readdir(join(adapterDirectory, folder ?? ''))).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);
    const update = server.requests.find((request) => request.path === '/update_weights_from_disk');
    expect(update?.body).toEqual({ model_path: join(adapterDirectory, folder ?? ''), weight_version: (folder ?? '').slice((folder ?? '').lastIndexOf('-v') + 2) });
    expect(server.weights.version).toMatch(/^1-[0-9a-f]{10}$/);
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
    await engine.loadPolicy(full(2));
    // The server holds version 2 in memory: version 1's folder is gone, and it cannot be pinned.
    expect((await readdir(adapterDirectory)).length).toBe(1);
    expect((await failure(collectEvents(engine, contractRequest([{ role: 'user', content: 'x' }], {}, { policyVersion: 1 })))).code).toBe('not_found');
    await engine.loadPolicy({ version: 0, kind: 'base', files: {} });
    expect(server.requests.at(-1)).toMatchObject({ path: '/update_weights_from_disk', body: { model_path: modelDirectory, weight_version: '0' } });
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(0);
  });

  it('updates the weights with the admin key and probes their version with the API key when SGLang has both', async () => {
    const modelDirectory = await modelFolder();
    const { engine, server } = await setUp(
      { mode: 'sglang', model: modelDirectory, apiKey: 'user-key', adminApiKey: 'admin-key' },
      { model: modelDirectory, modelDirectory, apiKey: 'user-key', adminApiKey: 'admin-key' },
    );
    await engine.loadPolicy(full(1));
    expect(server.weights.version).toMatch(/^1-/);
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
  });

  it('does not swap the weights again when another process serving from the server already did', async () => {
    const modelDirectory = await modelFolder();
    const { engine, server, adapterDirectory } = await setUp({ mode: 'sglang', model: modelDirectory }, { model: modelDirectory, modelDirectory });
    const judge = createOpenAICompatibleEngine({ baseUrl: server.url, model: modelDirectory, flavor: 'sglang', timeoutMs: 2000, adapterDirectory, modelDirectory, renderer: createTestChatRenderer() });
    cleanups.push(() => judge.close());
    await engine.loadPolicy(full(1));
    await judge.loadPolicy(full(1));
    expect(server.requests.filter((request) => request.path === '/update_weights_from_disk')).toHaveLength(1);
    expect(resultOf(await collectEvents(judge, hello)).policyVersion).toBe(1);
  });

  it('records the version SGLang answered with, not the one the request was sent under', async () => {
    const modelDirectory = await modelFolder();
    const { engine, server } = await setUp({ mode: 'sglang', model: modelDirectory }, { model: modelDirectory, modelDirectory });
    await engine.loadPolicy(full(1));
    // Another writer (or a load clawrl has not seen confirmed yet) changed the weights.
    server.weights.version = '2';
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(2);
  });

  it('keeps the weights it had when SGLang refuses the folder', async () => {
    const modelDirectory = await modelFolder();
    const { engine, server } = await setUp({ mode: 'sglang', model: modelDirectory }, { model: modelDirectory, modelDirectory });
    await engine.loadPolicy(full(1));
    server.failNextLoads(1);
    expect((await failure(engine.loadPolicy(full(2)))).message).toContain('Failed to update weights');
    expect(resultOf(await collectEvents(engine, hello)).policyVersion).toBe(1);
  });
});
