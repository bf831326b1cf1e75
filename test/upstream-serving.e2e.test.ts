/**
 * Trained versions served by vLLM and SGLang: `clawrl serve --engine vllm|sglang --adapter-dir`
 * against the fake servers, which read the adapter folders they are told to load. Feedback on a
 * few turns, a training step, and then: the next request goes to the new adapter's name while a
 * stream that started before the swap finishes on the old one and records the old version; a
 * rollback serves the base and rolling forward serves the adapter again; a load the server
 * refuses keeps the previous version served and is retried until it loads.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

interface Serving {
  role: string;
  engine: string;
  servedVersion: number;
  pending: { version: number; attempts: number; error: string } | null;
}
interface Status {
  policyVersion: number;
  trainSteps: number;
  samples: { ready: number };
  serving: Serving[];
}

/** The in-flight request is told apart by its token budget. */
const slowMaxTokens = 11;
function isSlowRequest(body: unknown): boolean {
  const record = body as { max_tokens?: unknown; sampling_params?: { max_new_tokens?: unknown } } | null;
  return record?.max_tokens === slowMaxTokens || record?.sampling_params?.max_new_tokens === slowMaxTokens;
}

describe.each(['vllm', 'sglang'] as const)('clawrl serve --engine %s --adapter-dir', (flavor) => {
  let folder: string;
  let adapterDirectory: string;
  let upstream: FakeVllmServer;
  let server: ClawrlServer;
  let model: string;
  /** The name the upstream serves the base model under: the model folder for vLLM, the served name for SGLang. */
  let upstreamModel: string;

  async function admin<Body>(route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> {
    const response = await fetch(`${server.url}${route}`, { method });
    expect(response.status, `${method} ${route}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Body;
  }

  function chat(sessionId: string, options: { stream?: boolean; maxTokens?: number } = {}): Promise<Response> {
    return fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': sessionId },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello from ${sessionId}` }], stream: options.stream ?? false, max_tokens: options.maxTokens ?? 12 }),
    });
  }

  /** Which name the upstream was asked to serve the last generation request with. */
  function lastServedName(): string | undefined {
    return upstream.requests.filter((request) => request.served !== undefined && !isSlowRequest(request.body)).at(-1)?.served;
  }

  function adapterNameOf(version: number): string {
    const name = [...upstream.adapters.keys()].find((candidate) => candidate.includes(`-v${version}-`));
    if (name === undefined) throw new Error(`version ${version} is not loaded: ${[...upstream.adapters.keys()].join(', ')}`);
    return name;
  }

  async function feedbackTurns(prefix: string, count: number): Promise<void> {
    const before = (await admin<Status>('/admin/status')).samples.ready;
    for (let index = 0; index < count; index += 1) {
      const response = await chat(`${prefix}-${index}`);
      expect(response.status).toBe(200);
      await response.json();
      const feedback = await fetch(`${server.url}/v1/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ turn_id: response.headers.get('x-clawrl-turn-id'), thumbs: index % 2 === 0 ? 'up' : 'down' }),
      });
      expect(feedback.status).toBe(200);
    }
    await until(async () => (await admin<Status>('/admin/status')).samples.ready >= before + count);
  }

  async function until(condition: () => Promise<boolean> | boolean, attempts = 300): Promise<void> {
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      if (await condition()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`timed out; the server said:\n${server.stderr().slice(-3000)}`);
  }

  beforeAll(async () => {
    folder = createTinyModelFolder();
    model = path.basename(folder);
    upstreamModel = flavor === 'vllm' ? folder : model;
    adapterDirectory = mkdtempSync(path.join(tmpdir(), 'clawrl-adapter-dir-'));
    upstream = await startFakeVllmServer({ mode: flavor, model: upstreamModel, autoToolChoice: true });
    server = await startClawrlServer([
      '--engine', flavor, '--upstream', upstream.url, '--model', folder, '--adapter-dir', adapterDirectory,
      // On vLLM the policy judge runs in the judge thread with an engine client of its own, which follows the versions too.
      '--judge', flavor === 'vllm' ? 'policy' : 'rules', '--method', 'rl', '--train-every', '4', '--lora-rank', '4', '--lora-alpha', '8',
    ]);
  });
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
    for (const directory of [folder, adapterDirectory, server?.data]) if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('sends the next request to the new adapter while a stream started before the swap finishes on the old one', async () => {
    expect((await admin<Status>('/admin/status')).serving).toEqual([{ role: 'gateway', engine: flavor, servedVersion: 0, pending: null }]);
    // Paused, so that the step runs while the slow stream is in flight, not as soon as four samples are ready.
    await admin('/admin/training/pause', 'POST');
    await feedbackTurns('first', 4);

    const release = upstream.holdStreams(isSlowRequest);
    const inFlight = await chat('in-flight', { stream: true, maxTokens: slowMaxTokens });
    expect(inFlight.headers.get('x-clawrl-policy-version')).toBe('0');
    const inFlightTurn = inFlight.headers.get('x-clawrl-turn-id') ?? '';

    await admin('/admin/training/resume', 'POST');
    await until(async () => (await admin<Status>('/admin/status')).serving[0]?.servedVersion === 1);
    const name = adapterNameOf(1);
    const config = JSON.parse(readFileSync(path.join(adapterDirectory, name, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, base_model_name_or_path: upstreamModel });

    const next = await chat('after-step');
    expect(next.headers.get('x-clawrl-policy-version')).toBe('1');
    await next.json();
    expect(lastServedName()).toBe(name);
    const nextTurn = await admin<{ policyVersion: number }>(`/admin/turns/${next.headers.get('x-clawrl-turn-id')}`);
    expect(nextTurn.policyVersion).toBe(1);

    release();
    const streamed = await inFlight.text();
    expect(streamed).toContain('data: [DONE]');
    const slow = upstream.requests.filter((request) => isSlowRequest(request.body));
    expect(slow.map((request) => request.served)).toEqual([upstreamModel]);
    await until(async () => (await admin<{ status: string }>(`/admin/turns/${inFlightTurn}`)).status === 'completed');
    expect((await admin<{ policyVersion: number }>(`/admin/turns/${inFlightTurn}`)).policyVersion).toBe(0);
  });

  it.runIf(flavor === 'vllm')('shows what the judge thread\'s own engine serves; it loads the same adapter without a second copy', async () => {
    // The judge thread follows the store's active version on its 15 s check.
    await until(async () => (await admin<Status>('/admin/status')).serving.some((entry) => entry.role === 'judge' && entry.servedVersion === 1), 250);
    expect((await admin<Status>('/admin/status')).serving).toEqual([
      { role: 'gateway', engine: 'vllm', servedVersion: 1, pending: null },
      { role: 'judge', engine: 'vllm', servedVersion: 1, pending: null },
    ]);
    const loads = upstream.requests.filter((request) => request.path === '/v1/load_lora_adapter');
    expect(loads.map((request) => (request.body as { lora_name: string }).lora_name)).toEqual([adapterNameOf(1), adapterNameOf(1)]);
    expect(readdirSync(adapterDirectory)).toEqual([adapterNameOf(1)]);
  });

  it('rolls back to the base and forward to the adapter', async () => {
    await admin('/admin/policies/0/activate', 'POST');
    const base = await chat('after-rollback');
    expect(base.headers.get('x-clawrl-policy-version')).toBe('0');
    await base.json();
    expect(lastServedName()).toBe(upstreamModel);
    expect((await admin<Status>('/admin/status')).serving[0]).toMatchObject({ servedVersion: 0, pending: null });

    await admin('/admin/policies/1/activate', 'POST');
    const forward = await chat('after-roll-forward');
    expect(forward.headers.get('x-clawrl-policy-version')).toBe('1');
    await forward.json();
    expect(lastServedName()).toBe(adapterNameOf(1));
  });

  it('keeps serving the previous version while the server refuses a load, and serves the new one once a retry loads it', async () => {
    await admin('/admin/training/pause', 'POST');
    await feedbackTurns('second', 4);
    // Every load fails (the trainer's own, the one its policy-published event triggers, the retries, the judge's) until the server is fixed.
    upstream.failNextLoads(Infinity);
    await admin('/admin/training/resume', 'POST');
    // The store activates 2 before the engine's first load attempt of it fails, so wait for both.
    await until(async () => {
      const current = await admin<Status>('/admin/status');
      return current.policyVersion === 2 && (current.serving[0]?.pending ?? null) !== null;
    });
    const status = await admin<Status>('/admin/status');
    expect(status.policyVersion).toBe(2);
    // The store's active version is 2; the engine still serves 1 and says why.
    expect(status.serving[0]).toMatchObject({ servedVersion: 1, pending: { version: 2, attempts: expect.any(Number) as unknown, error: expect.stringContaining('fake load failure') as unknown } });
    const during = await chat('during-failure');
    await during.json();
    expect(during.headers.get('x-clawrl-policy-version')).toBe('1');
    expect(lastServedName()).toBe(adapterNameOf(1));
    expect(server.stderr()).toContain('cannot load the policy version yet; serving the previous one and retrying');
    upstream.failNextLoads(0);

    await until(async () => (await admin<Status>('/admin/status')).serving[0]?.servedVersion === 2);
    expect((await admin<Status>('/admin/status')).serving[0]?.pending).toBeNull();
    const after = await chat('after-retry');
    await after.json();
    expect(after.headers.get('x-clawrl-policy-version')).toBe('2');
    expect(lastServedName()).toBe(adapterNameOf(2));
    // Every version the server loaded is a folder in the adapter directory, nothing half-written.
    expect(readdirSync(adapterDirectory).sort()).toEqual([...upstream.adapters.keys()].sort());
  });
});

describe('clawrl serve --engine vllm without --adapter-dir', () => {
  it('says at start-up that training is off because trained versions could not be served, and serves the base', async () => {
    const upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
    const server = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model']);
    try {
      expect(server.stderr()).toContain('training is off: trained versions cannot reach the vllm server without --adapter-dir <dir>');
      const status = (await (await fetch(`${server.url}/admin/status`)).json()) as Status & { training: { enabled: boolean } };
      expect(status.training.enabled).toBe(false);
      expect(status.serving).toEqual([{ role: 'gateway', engine: 'vllm', servedVersion: 0, pending: null }]);
    } finally {
      await server.stop();
      await upstream.close();
      rmSync(server.data, { recursive: true, force: true });
    }
  });
});

describe('clawrl serve --engine sglang --train-params full --adapter-dir', () => {
  it('writes each version as a model folder, swaps weights with /update_weights_from_disk, and records the version SGLang answered with', async () => {
    const folder = createTinyModelFolder();
    const model = path.basename(folder);
    const adapterDirectory = mkdtempSync(path.join(tmpdir(), 'clawrl-adapter-dir-'));
    const upstream = await startFakeVllmServer({ mode: 'sglang', model });
    const server = await startClawrlServer([
      '--engine', 'sglang', '--upstream', upstream.url, '--model', folder, '--adapter-dir', adapterDirectory,
      '--judge', 'rules', '--method', 'rl', '--train-every', '4', '--train-params', 'full',
    ]);
    const post = (route: string) => fetch(`${server.url}${route}`, { method: 'POST' });
    const chat = (sessionId: string, maxTokens = 12) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': sessionId },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello from ${sessionId}` }], stream: maxTokens === slowMaxTokens, max_tokens: maxTokens }),
      });
    const status = async () => (await (await fetch(`${server.url}/admin/status`)).json()) as Status;
    try {
      expect((await post('/admin/training/pause')).status).toBe(200);
      for (let index = 0; index < 4; index += 1) {
        const response = await chat(`full-${index}`);
        await response.json();
        await fetch(`${server.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: response.headers.get('x-clawrl-turn-id'), thumbs: 'up' }) });
      }
      for (let attempt = 0; attempt < 300 && (await status()).samples.ready < 4; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      const release = upstream.holdStreams(isSlowRequest);
      const inFlight = await chat('in-flight', slowMaxTokens);
      expect(inFlight.headers.get('x-clawrl-policy-version')).toBe('0');
      expect((await post('/admin/training/resume')).status).toBe(200);
      for (let attempt = 0; attempt < 300 && (await status()).serving[0]?.servedVersion !== 1; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await status()).serving[0]).toMatchObject({ engine: 'sglang', servedVersion: 1, pending: null });

      const update = upstream.requests.find((request) => request.path === '/update_weights_from_disk');
      const written = (update?.body as { model_path: string; weight_version: string }).model_path;
      expect((update?.body as { weight_version: string }).weight_version).toMatch(/^1-[0-9a-f]{10}$/);
      expect(path.dirname(written)).toBe(adapterDirectory);
      expect(readdirSync(written)).toEqual(expect.arrayContaining(['config.json', 'model.safetensors', 'tokenizer.json']));

      const next = await chat('after-step');
      await next.json();
      expect(next.headers.get('x-clawrl-policy-version')).toBe('1');
      expect(upstream.requests.at(-1)).toMatchObject({ path: '/generate', weightVersion: expect.stringMatching(/^1-/) as unknown });

      release();
      expect(await inFlight.text()).toContain('[DONE]');
      const turnId = inFlight.headers.get('x-clawrl-turn-id') ?? '';
      let turn = { status: '', policyVersion: -1 };
      for (let attempt = 0; attempt < 100 && turn.status !== 'completed'; attempt += 1) {
        turn = (await (await fetch(`${server.url}/admin/turns/${turnId}`)).json()) as typeof turn;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(turn.policyVersion).toBe(0);

      expect((await post('/admin/policies/0/activate')).status).toBe(200);
      expect(upstream.requests.at(-1)).toMatchObject({ path: '/update_weights_from_disk', body: { model_path: folder, weight_version: '0' } });
      // The server holds the base again: the full-weight folder of version 1 is only disk, and is gone.
      expect(readdirSync(adapterDirectory)).toEqual([]);
    } finally {
      await server.stop();
      await upstream.close();
      for (const directory of [folder, adapterDirectory, server.data]) rmSync(directory, { recursive: true, force: true });
    }
  });
});
