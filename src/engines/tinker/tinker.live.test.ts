/**
 * The TrainingEngine contract against a real Tinker-compatible service (the hosted service, or a
 * self-hosted one such as SkyRL's). Skipped unless CLAWRL_TINKER_URL is set; the key comes from
 * CLAWRL_TINKER_API_KEY (default `tml-dummy`, what self-hosted servers accept) and the base model
 * from CLAWRL_TINKER_BASE_MODEL (default Qwen/Qwen3-4B-Instruct-2507). The token ids are small
 * ids every Qwen/Llama vocabulary has; the contract only needs them to be valid. With
 * CLAWRL_TINKER_MODEL_DIR (a local folder with the base model's tokenizer and chat template) the
 * InferenceEngine contract runs against the service's sampling too.
 */
import { describe, it } from 'vitest';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { runInferenceEngineContract } from '../inference-engine.contract.js';
import { runTrainingEngineContract } from '../training-engine.contract.js';
import { createTinkerClient } from './create-tinker-client.js';
import { createTinkerInferenceEngine } from './create-tinker-inference-engine.js';
import { createTinkerTrainingEngine } from './create-tinker-training-engine.js';

const url = process.env.CLAWRL_TINKER_URL;
const apiKey = process.env.CLAWRL_TINKER_API_KEY ?? 'tml-dummy';
const baseModel = process.env.CLAWRL_TINKER_BASE_MODEL ?? 'Qwen/Qwen3-4B-Instruct-2507';
const modelDirectory = process.env.CLAWRL_TINKER_MODEL_DIR;

if (url === undefined || url === '') {
  describe('Tinker live', () => {
    it.skip('needs CLAWRL_TINKER_URL', () => undefined);
  });
} else {
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
    promptTokenIds: [785, 6722, 315, 9625, 374],
    responseTokenIds: [12095, 13, 576, 6722],
  });
  if (modelDirectory !== undefined && modelDirectory !== '') {
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
