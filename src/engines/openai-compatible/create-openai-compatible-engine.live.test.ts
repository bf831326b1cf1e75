/**
 * The InferenceEngine contract against real servers, run by `npm run test:live` when an endpoint
 * is configured: CLAWRL_LIVE_VLLM_URL, CLAWRL_LIVE_SGLANG_URL, CLAWRL_LIVE_OPENAI_URL, each with
 * CLAWRL_LIVE_MODEL (the upstream model name) and optionally CLAWRL_LIVE_API_KEY. SGLang also
 * needs CLAWRL_LIVE_MODEL_DIR: a local folder with the served model's tokenizer and template.
 */
import { describe } from 'vitest';
import { runInferenceEngineContract } from '../inference-engine.contract.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import type { ChatFlavor } from './chat-completions-api.js';
import { createOpenAICompatibleEngine } from './create-openai-compatible-engine.js';

const model = process.env['CLAWRL_LIVE_MODEL'] ?? '';
const apiKey = process.env['CLAWRL_LIVE_API_KEY'];
const modelDirectory = process.env['CLAWRL_LIVE_MODEL_DIR'] ?? '';

function liveContract(flavor: ChatFlavor, url: string | undefined): void {
  const missingRenderer = flavor === 'sglang' && modelDirectory === '';
  describe.skipIf(url === undefined || url === '' || model === '' || missingRenderer)(`live ${flavor}`, () => {
    const exact = flavor !== 'openai';
    runInferenceEngineContract({
      name: `openai-compatible ${flavor} against ${url ?? '(unset)'}`,
      // Real models do not reliably call a tool, so only the delta/result consistency is checked.
      capabilities: { tokenIds: exact, scoring: exact, temperatureScoring: false, policyLoading: false, forcedToolChoice: flavor !== 'sglang', responseFormats: flavor !== 'sglang' ? ['json_object', 'json_schema'] : [], toolCalls: false },
      // Sampled (processed) and prompt log-probs agree only approximately across batches.
      logprobTolerance: 0.05,
      createEngine: async () => {
        const engine = createOpenAICompatibleEngine({
          baseUrl: url ?? '',
          model,
          flavor,
          timeoutMs: 60_000,
          ...(apiKey === undefined ? {} : { apiKey }),
          ...(flavor === 'sglang' ? { renderer: await loadChatRenderer(modelDirectory) } : {}),
        });
        return { engine, close: () => engine.close() };
      },
    });
  });
}

liveContract('vllm', process.env['CLAWRL_LIVE_VLLM_URL']);
liveContract('sglang', process.env['CLAWRL_LIVE_SGLANG_URL']);
liveContract('openai', process.env['CLAWRL_LIVE_OPENAI_URL']);
