import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultPolicyLossOptions, policyLoss } from '../../core/rl/policy-loss.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { TrainingEngine } from '../../spec/training-engine.js';
import { createTinyModelFolder } from '../local/testing/create-tiny-model-folder.js';
import { createTinkerClient, type TinkerClientOptions } from './create-tinker-client.js';
import { createTinkerTrainingEngine } from './create-tinker-training-engine.js';
import { tinkerTestDatum } from './testing/tinker-test-datum.js';
import { createTinkerTestServer, type TinkerTestServer } from './testing/create-tinker-test-server.js';

const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
let server: TinkerTestServer;
let engine: TrainingEngine;
const datum = tinkerTestDatum;
const fastRetries = { initialDelayMs: 1, maxDelayMs: 5 };
const openEngine = async (client: Partial<TinkerClientOptions> = {}) =>
  createTinkerTrainingEngine({ client: await createTinkerClient({ url: server.url, apiKey: 'tml-test', retry: fastRetries, ...client }), baseModel: 'tiny', loraRank: 4, optimizer: { learningRate: 1e-2 } });
const isCode = (code: string) => (error: unknown) => ClawrlError.isInstance(error) && error.code === code;

beforeAll(async () => {
  server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl, loraAlpha: 8, holdMs: 20 });
  engine = await openEngine();
});
afterAll(async () => {
  await engine.close();
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the Tinker client and training engine', () => {
  it('polls a future again after 408 and try_again, and resubmits the same request once its result expired (410)', async () => {
    server.inject({ path: 'retrieve_future', kind: '408', times: 2 });
    server.inject({ path: 'retrieve_future', kind: 'try-again', times: 2 });
    const before = server.received.length;
    const stepped = await engine.optimizerStep();
    expect(Number.isFinite(stepped.gradientNorm)).toBe(true);
    server.inject({ path: 'retrieve_future', kind: 'expire' });
    const again = await engine.optimizerStep();
    expect(again.step).toBe(stepped.step + 1);
    // The resubmission carries the same seq_id and idempotency key: the server ran it once.
    const sent = server.received.slice(before).map((request) => `${request.path}:${request.seqId}`);
    const last = server.received.at(-1)?.seqId;
    expect(sent).toEqual([`optim_step:${(last ?? 0) - 1}`, `optim_step:${last}`, `optim_step:${last}`]);
  });

  it('retries 5xx answers and dropped connections with back-off, and gives up with a retryable upstream_error', async () => {
    server.inject({ path: 'forward_backward', kind: 'http-500', times: 2 });
    server.inject({ path: 'optim_step', kind: 'drop' });
    await engine.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    expect((await engine.optimizerStep()).gradientNorm).toBeGreaterThan(0);
    const impatient = await openEngine({ retry: { ...fastRetries, maxAttempts: 3 } });
    server.inject({ path: 'optim_step', kind: 'http-500', times: 3 });
    await expect(impatient.optimizerStep()).rejects.toSatisfy((error: unknown) => isCode('upstream_error')(error) && ClawrlError.isInstance(error) && error.retryable);
    await impatient.close();
  });

  it('dispatches a model’s calls strictly in seq_id order even when an earlier one is being retried', async () => {
    server.inject({ path: 'forward_backward', kind: 'http-500', times: 3 });
    const before = server.received.length;
    // Not awaited in turn: the optimizer step must wait until the forward-backward was accepted.
    const [output, stepped] = await Promise.all([engine.forwardBackward({ data: [datum], loss: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 } }), engine.optimizerStep()]);
    expect(output.logprobs[0]).toHaveLength(4);
    expect(stepped.gradientNorm).toBeGreaterThan(0);
    const sent = server.received.slice(before);
    expect(sent.map((request) => request.path)).toEqual(['forward_backward', 'optim_step']);
    expect((sent[1]?.seqId ?? 0) - (sent[0]?.seqId ?? 0)).toBe(1);
  });

  it('fails a request the service rejects as a user error at once, without sending it again', async () => {
    server.inject({ path: 'forward_backward', kind: 'user-error' });
    const before = server.received.length;
    await expect(engine.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } })).rejects.toSatisfy(isCode('invalid_request'));
    expect(server.received.slice(before).map((request) => request.path)).toEqual(['forward_backward']);
    // The model goes on with the next seq_id.
    await engine.optimizerStep();
  });

  it('computes decoupled_ppo as the trainer defines it, importance weight truncation included', async () => {
    // Rollout log-probs far below the trainer's: exp(ℓ_old − μ) exceeds the cap C = 2 on every token.
    const unlikely = { ...datum, rolloutLogprobs: [-30, -30, -30, -30] };
    const loss = { name: 'decoupled_ppo' as const, ...defaultPolicyLossOptions, klCoefficient: 0 };
    const output = await engine.forwardBackward({ data: [unlikely], loss });
    const { support: _none, ...sequence } = unlikely;
    const expected = policyLoss([{ ...sequence, logprobs: output.logprobs[0] ?? [] }], defaultPolicyLossOptions);
    expect(output.loss).toBeCloseTo(expected.policyGradientLoss, 5);
    expect(Math.abs(output.loss)).toBeGreaterThan(0.1);
    await engine.optimizerStep();
  });

  it('refuses samples drawn at another temperature than 1, and support sets, before sending anything', async () => {
    const before = server.received.length;
    await expect(engine.forwardBackward({ data: [{ ...datum, temperature: 0.7 }], loss: { name: 'importance_sampling' } })).rejects.toSatisfy(isCode('unsupported'));
    await expect(engine.forwardBackward({ data: [{ ...datum, support: datum.responseTokenIds.map(() => ({ tokenIds: [3], advantages: [1] })) }], loss: { name: 'importance_sampling' } })).rejects.toSatisfy(isCode('unsupported'));
    expect(server.received.length).toBe(before);
  });

  it('resumes in a new process from save_state: the same weights and the optimizer step count', async () => {
    await engine.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    const trained = await engine.optimizerStep();
    const probe = { ...datum, advantages: datum.advantages.map(() => 0) };
    const saved = (await engine.forwardBackward({ data: [probe], loss: { name: 'importance_sampling' } })).logprobs[0] ?? [];
    const reference = await engine.saveState('step-7');
    expect(reference).toMatch(/^tinker:\/\/[^/]+\/weights\/step-7_o\d+_/);
    const restarted = await openEngine();
    const fresh = (await restarted.forwardBackward({ data: [probe], loss: { name: 'importance_sampling' } })).logprobs[0] ?? [];
    expect(fresh[0]).not.toBeCloseTo(saved[0] ?? Number.NaN, 4);
    await restarted.loadState(reference);
    const resumed = (await restarted.forwardBackward({ data: [probe], loss: { name: 'importance_sampling' } })).logprobs[0] ?? [];
    resumed.forEach((value, index) => expect(value).toBeCloseTo(saved[index] ?? Number.NaN, 5));
    expect((await restarted.optimizerStep()).step).toBe(trained.step + 1);
    await restarted.close();
  });

  it('keeps the session alive with heartbeats, refuses a wrong key and a base model the service does not train', async () => {
    const client = await createTinkerClient({ url: server.url, apiKey: 'tml-test', heartbeatIntervalMs: 10 });
    const before = server.heartbeats();
    await vi.waitFor(() => expect(server.heartbeats()).toBeGreaterThan(before + 1));
    await client.close();
    await expect(createTinkerClient({ url: server.url, apiKey: 'tml-wrong' })).rejects.toSatisfy(isCode('invalid_api_key'));
    const other = createTinkerTrainingEngine({ client: await createTinkerClient({ url: server.url, apiKey: 'tml-test' }), baseModel: 'Qwen/Qwen3-4B' });
    await expect(other).rejects.toSatisfy(isCode('configuration_error'));
  });
});
