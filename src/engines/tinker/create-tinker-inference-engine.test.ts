import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import { collectEvents, contractRequest, resultOf, runInferenceEngineContract } from '../inference-engine.contract.js';
import { createTinyModelFolder } from '../local/testing/create-tiny-model-folder.js';
import { createTinkerClient } from './create-tinker-client.js';
import { createTinkerInferenceEngine } from './create-tinker-inference-engine.js';
import { createTinkerTrainingEngine } from './create-tinker-training-engine.js';
import { createTinkerTestServer, type TinkerTestServer } from './testing/create-tinker-test-server.js';

const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
let server: TinkerTestServer;
let published: PolicyArtifact | null = null;

const client = () => createTinkerClient({ url: server.url, apiKey: 'tml-test' });
const openInference = async () => createTinkerInferenceEngine({ client: await client(), baseModel: 'tiny', servedModelId: 'tiny', renderer: await loadChatRenderer(folder), contextLength: 2048 });
const openTraining = async () => createTinkerTrainingEngine({ client: await client(), baseModel: 'tiny', loraRank: 4, optimizer: { learningRate: 5e-2 } });

beforeAll(async () => {
  server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl, loraAlpha: 8 });
  const training = await openTraining();
  published = await training.publishWeights(1);
  await training.close();
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

runInferenceEngineContract({
  name: 'Tinker sampling over the Tinker test server',
  createEngine: async () => {
    const engine = await openInference();
    return { engine, close: () => engine.close() };
  },
  capabilities: { tokenIds: true, scoring: true, temperatureScoring: false, policyLoading: true, forcedToolChoice: false, responseFormats: [], toolCalls: false },
  createPolicyArtifact: (version) => {
    if (published === null) throw new Error('no published version');
    return { ...published, version };
  },
});

describe('the Tinker inference engine', () => {
  it('samples a version the Tinker trainer published: its scores are the trained log-probs', async () => {
    const engine = await openInference();
    const training = await openTraining();
    const sampled = resultOf(await collectEvents(engine, contractRequest([{ role: 'user', content: 'Say hello.' }], { temperature: 1, maxTokens: 6 })));
    const choice = sampled.choices[0];
    if (choice === undefined || choice.responseTokenIds.length === 0) throw new Error('nothing sampled');
    // Train the sampled reply up, publish it, and serve the new version.
    const datum = {
      promptTokenIds: sampled.promptTokenIds, responseTokenIds: choice.responseTokenIds, lossMask: choice.responseTokenIds.map(() => 1),
      advantages: choice.responseTokenIds.map(() => 1), rolloutLogprobs: choice.logprobs, temperature: 1,
    };
    await training.forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    await training.optimizerStep();
    const trained = (await training.forwardBackward({ data: [{ ...datum, advantages: datum.advantages.map(() => 0) }], loss: { name: 'importance_sampling' } })).logprobs[0] ?? [];
    await engine.loadPolicy(await training.publishWeights(2));
    const scored = await engine.score({ prompt: { tokenIds: sampled.promptTokenIds }, responseTokenIds: choice.responseTokenIds });
    scored.logprobs.forEach((value, index) => expect(value).toBeCloseTo(trained[index] ?? Number.NaN, 4));
    const base = await engine.score({ prompt: { tokenIds: sampled.promptTokenIds }, responseTokenIds: choice.responseTokenIds, policyVersion: 0 });
    base.logprobs.forEach((value, index) => expect(value).toBeCloseTo(choice.logprobs[index] ?? Number.NaN, 4));
    expect(scored.logprobs.reduce((sum, value) => sum + value, 0)).toBeGreaterThan(base.logprobs.reduce((sum, value) => sum + value, 0));
    await training.close();
    await engine.close();
  });
});
