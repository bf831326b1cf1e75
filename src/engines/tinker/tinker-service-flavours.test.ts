import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import type { TrainingEngine } from '../../spec/training-engine.js';
import { createTinyModelFolder } from '../local/testing/create-tiny-model-folder.js';
import { createTinkerClient, type TinkerClientOptions } from './create-tinker-client.js';
import { createTinkerTrainingEngine, tinkerCheckpointFileName } from './create-tinker-training-engine.js';
import { tinkerTestDatum } from './testing/tinker-test-datum.js';
import { createTinkerTestServer, type TinkerTestServer, type TinkerTestServerOptions } from './testing/create-tinker-test-server.js';

// The client against the two kinds of Tinker server it meets: the hosted service and SkyRL.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
const servers: TinkerTestServer[] = [];
const engines: TrainingEngine[] = [];
const datum = tinkerTestDatum;
const fast = { initialDelayMs: 1, maxDelayMs: 5, archive: { notReadyDelayMs: 1 } };
const decoupled = { name: 'decoupled_ppo' as const, clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0 };
const isCode = (code: string) => (error: unknown) => ClawrlError.isInstance(error) && error.code === code;

async function serverOf(options: Partial<TinkerTestServerOptions> = {}): Promise<TinkerTestServer> {
  const server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl, loraAlpha: 8, holdMs: 20, ...options });
  servers.push(server);
  return server;
}
async function engineOf(server: TinkerTestServer, options: { client?: Partial<TinkerClientOptions>; logger?: Logger } = {}): Promise<TrainingEngine> {
  const client = await createTinkerClient({ url: server.url, apiKey: 'tml-test', retry: fast, ...options.client });
  const engine = await createTinkerTrainingEngine({ client, baseModel: 'tiny', loraRank: 4, optimizer: { learningRate: 1e-2 }, downloadAdapters: true, ...(options.logger === undefined ? {} : { logger: options.logger }) });
  engines.push(engine);
  return engine;
}
const textOf = (files: Record<string, Uint8Array>, name: string) => JSON.parse(new TextDecoder().decode(files[name])) as Record<string, unknown>;

let hosted: TinkerTestServer;
let skyrl: TinkerTestServer;
beforeAll(async () => {
  hosted = await serverOf({ jwtLifetimeSeconds: 2 });
  skyrl = await serverOf({ flavour: 'skyrl' });
});
afterAll(async () => {
  for (const engine of engines) await engine.close();
  for (const server of servers) await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the Tinker client against the hosted service and SkyRL', () => {
  it('trades the key for a JWT where client/config asks, renews it before it expires, and the service refuses the raw key', async () => {
    const engine = await engineOf(hosted);
    const exchanged = hosted.tokenExchanges();
    expect(exchanged).toBeGreaterThan(0);
    await engine.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    // The JWT lives 1–2 s here: past it, calls go on with a renewed one.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(Number.isFinite((await engine.optimizerStep()).gradientNorm)).toBe(true);
    expect(hosted.tokenExchanges()).toBeGreaterThan(exchanged);
    const raw = await fetch(`${hosted.url}/api/v1/get_server_capabilities`, { headers: { 'X-API-Key': 'tml-test' } });
    expect(raw.status).toBe(401);
  });

  it('reads ℓ_old with a zero-advantage forward_backward where there is no /forward: the same loss and gradient as with /forward', async () => {
    const results = [];
    for (const server of [hosted, skyrl]) {
      const engine = await engineOf(server);
      const before = server.forwardBackwardAdvantages.length;
      const output = await engine.forwardBackward({ data: [{ ...datum, rolloutLogprobs: [-30, -30, -30, -30] }], loss: decoupled });
      const step = await engine.optimizerStep();
      results.push({ loss: output.loss, gradientNorm: step.gradientNorm, advantages: server.forwardBackwardAdvantages.slice(before).map((batch) => batch.flat()) });
    }
    const [viaForwardBackward, viaForward] = results;
    expect(viaForwardBackward?.advantages).toHaveLength(2);
    expect(viaForwardBackward?.advantages[0]?.every((advantage) => advantage === 0)).toBe(true);
    expect(viaForward?.advantages).toHaveLength(1);
    expect(viaForwardBackward?.loss).toBeCloseTo(viaForward?.loss ?? Number.NaN, 5);
    // SkyRL names the gradient norm `skyrl.ai/grad_norm`.
    expect(viaForward?.gradientNorm).toBeGreaterThan(0);
    expect(viaForwardBackward?.gradientNorm).toBeCloseTo(viaForward?.gradientNorm ?? Number.NaN, 5);
  });

  it('cuts forward_backward by the datums and bytes the service allows', async () => {
    const limited = await serverOf({ chunkLimits: { datums: 2, bytes: 1_900 } });
    const engine = await engineOf(limited);
    const before = limited.forwardBackwardAdvantages.length;
    const data = [0, 1, 2, 3, 4].map((index) => ({ ...datum, advantages: datum.advantages.map((advantage) => advantage * (index + 1)) }));
    const output = await engine.forwardBackward({ data, loss: { name: 'importance_sampling' } });
    expect(output.logprobs).toHaveLength(5);
    const sizes = limited.forwardBackwardAdvantages.slice(before).map((batch) => batch.length);
    expect(sizes.reduce((total, size) => total + size, 0)).toBe(5);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
  });

  it('downloads archives as the hosted service (302 or 200 {url}) and SkyRL serve them, the signed URL without the key, waiting out 503 and 425', async () => {
    const json = await serverOf({ archiveAnswer: 'json' });
    for (const server of [hosted, json, skyrl]) {
      const engine = await engineOf(server);
      await engine.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
      await engine.optimizerStep();
      server.inject({ path: 'archive', kind: 'http-503', times: 2 });
      server.inject({ path: 'archive', kind: 'http-425' });
      const artifact = await engine.publishWeights(1);
      expect(textOf(artifact.files, tinkerCheckpointFileName).peftAdapter).toEqual({ published: true });
      expect(Object.keys(artifact.files).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', tinkerCheckpointFileName]);
      // Built from the tensor names: the archive's own config has no target_modules.
      expect(textOf(artifact.files, 'adapter_config.json')).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, base_model_name_or_path: 'tiny', target_modules: expect.arrayContaining(['q_proj']) });
      expect(textOf(artifact.files, tinkerCheckpointFileName)).toMatchObject({ peftAdapter: { published: true } });
    }
  });

  it('polls again after polls that hang past their timeout and up to 3 bare 400s, none counted as a failed try; SkyRL’s failed request fails after them', async () => {
    const engine = await engineOf(hosted, { client: { retry: { ...fast, maxAttempts: 1, pollTimeoutMs: 200 } } });
    hosted.inject({ path: 'retrieve_future', kind: 'hang', times: 2 });
    hosted.inject({ path: 'retrieve_future', kind: 'bare-400', times: 3 });
    expect((await engine.optimizerStep()).step).toBe(1);
    hosted.inject({ path: 'retrieve_future', kind: 'bare-400', times: 4 });
    await expect(engine.optimizerStep()).rejects.toSatisfy(isCode('invalid_request'));
    const onSkyrl = await engineOf(skyrl);
    skyrl.inject({ path: 'forward_backward', kind: 'user-error' });
    await expect(onSkyrl.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } })).rejects.toThrow(/injected user error/);
  }, 20_000);
});
