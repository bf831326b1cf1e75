/**
 * clawrl against a real Tinker-compatible service (the hosted service, or a self-hosted one such as
 * SkyRL's): what only a real service can confirm. Skipped unless CLAWRL_TINKER_URL is set; the key
 * comes from CLAWRL_TINKER_API_KEY (default `tml-dummy`, what self-hosted servers accept) and the
 * base model from CLAWRL_TINKER_BASE_MODEL (default Qwen/Qwen3-4B-Instruct-2507).
 *
 * First the path one training step takes, each call checked: `client/config` and, where the service
 * asks for it, the token exchange (every later call carries the JWT, never the key); one JSON
 * `forward_backward`; `optim_step`; `save_weights_for_sampler`; the archive download through the
 * SDK's route and the signed URL; its conversion into a PEFT adapter. Then the TrainingEngine
 * contract, and with CLAWRL_TINKER_MODEL_DIR (a local folder with the base model's tokenizer and
 * chat template) the InferenceEngine contract against the service's sampling. The token ids are
 * small ids every Qwen/Llama vocabulary has. Costs a few cents of training on the hosted service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors } from '../../model/safetensors.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import type { TrainingEngine } from '../../spec/training-engine.js';
import { runInferenceEngineContract } from '../inference-engine.contract.js';
import { runTrainingEngineContract } from '../training-engine.contract.js';
import { createTinkerClient } from './create-tinker-client.js';
import { createTinkerInferenceEngine } from './create-tinker-inference-engine.js';
import { createTinkerTrainingEngine, tinkerCheckpointFileName } from './create-tinker-training-engine.js';

const url = process.env.CLAWRL_TINKER_URL ?? '';
const apiKey = process.env.CLAWRL_TINKER_API_KEY ?? 'tml-dummy';
const baseModel = process.env.CLAWRL_TINKER_BASE_MODEL ?? 'Qwen/Qwen3-4B-Instruct-2507';
const modelDirectory = process.env.CLAWRL_TINKER_MODEL_DIR ?? '';
const promptTokenIds = [785, 6722, 315, 9625, 374];
const responseTokenIds = [12095, 13, 576, 6722];

describe.skipIf(url === '')(`Tinker live at ${url || '(CLAWRL_TINKER_URL unset)'}`, () => {
  /** Every call the client made: its path and what it sent as X-API-Key. */
  const calls: { path: string; apiKey: string | null }[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const target = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
    calls.push({ path: new URL(target).pathname, apiKey: new Headers(init?.headers).get('x-api-key') });
    return fetch(input, init);
  };
  let engine: TrainingEngine;

  beforeAll(async () => {
    const client = await createTinkerClient({ url, apiKey, fetch: recordingFetch });
    engine = await createTinkerTrainingEngine({ client, baseModel, loraRank: 8, optimizer: { learningRate: 1e-4 }, downloadAdapters: true });
  }, 600_000);
  afterAll(async () => {
    await engine?.close();
  });

  it('opens with client/config, and trades the key for a JWT where the service asks for it', () => {
    const paths = calls.map((call) => call.path.replace(/^.*\/api\/v1\//, ''));
    expect(paths[0]).toBe('client/config');
    expect(calls[0]?.apiKey).toBe(apiKey);
    const exchanged = paths.includes('auth/token');
    const later = calls.filter((call) => !/\/(client\/config|auth\/token)$/.test(call.path));
    expect(later.length).toBeGreaterThan(0);
    for (const call of later) {
      if (exchanged) {
        expect(call.apiKey).not.toBe(apiKey);
        expect(call.apiKey).toMatch(/^eyJ/);
      } else expect(call.apiKey).toBe(apiKey);
    }
  });

  it('runs one JSON forward_backward and an optim_step, and answers with one log-prob per response token', async () => {
    const length = responseTokenIds.length;
    const output = await engine.forwardBackward({
      data: [{ promptTokenIds, responseTokenIds, lossMask: responseTokenIds.map(() => 1), advantages: [1, 1, -1, 1], rolloutLogprobs: Array.from({ length }, () => -3), temperature: 1 }],
      loss: { name: 'importance_sampling' },
    });
    expect(output.logprobs[0]).toHaveLength(length);
    for (const logprob of output.logprobs[0] ?? []) expect(logprob).toBeLessThanOrEqual(0);
    expect(Number.isFinite(output.loss)).toBe(true);
    const step = await engine.optimizerStep();
    expect(step.step).toBe(1);
  }, 600_000);

  it('saves sampler weights and downloads their archive as a PEFT adapter of the trained rank', async () => {
    const artifact = await engine.publishWeights(1);
    const checkpoint = JSON.parse(new TextDecoder().decode(artifact.files[tinkerCheckpointFileName])) as { samplerPath: string; peftAdapter?: unknown };
    expect(checkpoint.samplerPath).toMatch(/^tinker:\/\/[^/]+\/sampler_weights\/clawrl-v1-/);
    expect(checkpoint.peftAdapter).toEqual({ published: true });
    const config = JSON.parse(new TextDecoder().decode(artifact.files['adapter_config.json'])) as { r: number; target_modules: string[] };
    expect(config.r).toBe(8);
    expect(config.target_modules.length).toBeGreaterThan(0);
    const names = [...readSafetensors(artifact.files['adapter_model.safetensors'] ?? new Uint8Array()).tensors.keys()];
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^base_model\.model\..+\.lora_[AB]\.weight$/);
    // The signed URL (SkyRL: its own download route) was fetched without the key or its JWT.
    expect(calls.at(-1)?.apiKey).toBeNull();
  }, 600_000);
});

if (url !== '') {
  runTrainingEngineContract({
    name: `Tinker at ${url}`,
    createEngine: async () =>
      createTinkerTrainingEngine({
        client: await createTinkerClient({ url, apiKey }),
        baseModel,
        loraRank: 8,
        // Large enough that one step visibly moves a 4B model's log-probs of a short response.
        optimizer: { learningRate: 1e-3 },
      }),
    promptTokenIds,
    responseTokenIds,
  });
  if (modelDirectory !== '') {
    runInferenceEngineContract({
      name: `Tinker sampling at ${url}`,
      createEngine: async () => {
        const engine = await createTinkerInferenceEngine({ client: await createTinkerClient({ url, apiKey }), baseModel, servedModelId: baseModel, renderer: await loadChatRenderer(modelDirectory) });
        return { engine, close: () => engine.close() };
      },
      capabilities: { tokenIds: true, scoring: true, temperatureScoring: false, policyLoading: true, forcedToolChoice: false, responseFormats: [], toolCalls: true },
      // Sampled and prompt log-probs come from different kernels on a GPU service.
      logprobTolerance: 0.05,
    });
  }
}
