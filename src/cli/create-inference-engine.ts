/**
 * Picks and builds the inference engine named by the configuration. The only place that knows
 * every engine adapter.
 */
import path from 'node:path';
import { createOpenAICompatibleEngine } from '../engines/openai-compatible/create-openai-compatible-engine.js';
import { loadChatRenderer } from '../model/create-chat-renderer.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';

export interface EngineConfiguration {
  engine: 'local' | 'openai' | 'vllm' | 'sglang' | 'llamacpp';
  model: string;
  servedModel: string | undefined;
  upstream: string | undefined;
  upstreamModel: string | undefined;
  upstreamApiKey: string | undefined;
  upstreamTimeout: number;
}

/** The name clients use: explicit, else the model name, else a model folder's name. */
export function servedModelNameOf(configuration: Pick<EngineConfiguration, 'model' | 'servedModel'>): string {
  if (configuration.servedModel !== undefined) return configuration.servedModel;
  const looksLikePath = configuration.model.startsWith('.') || configuration.model.startsWith('/');
  return looksLikePath ? path.basename(path.resolve(configuration.model)) : configuration.model;
}

export async function createInferenceEngine(configuration: EngineConfiguration): Promise<InferenceEngine> {
  const servedModelId = servedModelNameOf(configuration);
  switch (configuration.engine) {
    case 'local':
    case 'llamacpp':
      throw new ClawrlError(
        'configuration_error',
        `--engine ${configuration.engine} is not available in this version of clawrl yet. ` +
          'Serve through a remote engine instead: --engine vllm|sglang|openai --upstream <url> --model <name>.',
        { param: 'engine' },
      );
    case 'openai':
    case 'vllm':
    case 'sglang': {
      if (configuration.upstream === undefined) {
        throw new ClawrlError('configuration_error', `--engine ${configuration.engine} needs --upstream <url> (CLAWRL_UPSTREAM).`, {
          param: 'upstream',
        });
      }
      const renderer = configuration.engine === 'sglang' ? await loadChatRenderer(configuration.model) : undefined;
      const upstreamModel =
        configuration.upstreamModel ?? (configuration.engine === 'sglang' ? servedModelId : configuration.model);
      return createOpenAICompatibleEngine({
        baseUrl: configuration.upstream,
        model: upstreamModel,
        servedModelId,
        flavor: configuration.engine,
        timeoutMs: configuration.upstreamTimeout,
        ...(configuration.upstreamApiKey === undefined ? {} : { apiKey: configuration.upstreamApiKey }),
        ...(renderer === undefined ? {} : { renderer }),
      });
    }
  }
}
