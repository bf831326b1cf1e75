/**
 * What the server samples with when a request names no temperature, top_p or top_k: the flags,
 * else the model folder's generation_config.json, else the OpenAI API's own defaults (1, 1, no
 * top-k). OpenClaw sends no sampling parameters, so these decide how every agent turn is sampled;
 * vLLM serves a model the same way (its `--generation-config auto`), and a model such as Qwen3 or
 * the built-in one is published to be sampled at its own temperature, not at 1.
 */
import type { SamplingDefaults } from '../../gateway/gateway-context.js';
import { readGenerationConfig } from '../../model/model-folder.js';
import { modelFolderOf } from '../wiring/create-inference-engine.js';

export interface SamplingDefaultsConfiguration {
  model: string;
  /**
   * The engine scores under any temperature (`EngineCapabilities.temperatureScoring`). When it
   * cannot, the model's own temperature is not taken: the teacher's and the trainer's log-probs
   * would then be of another distribution than the reply's.
   */
  temperatureScoring: boolean;
  maxTokens: number;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
}

export interface ResolvedSamplingDefaults {
  defaults: SamplingDefaults;
  /** Where each default came from, for the start-up log. */
  sources: Record<'temperature' | 'topP' | 'topK', 'flag' | 'generation_config.json' | 'default'>;
}

export async function resolveSamplingDefaults(configuration: SamplingDefaultsConfiguration): Promise<ResolvedSamplingDefaults> {
  const folder = modelFolderOf(configuration.model);
  const generation = folder === null ? null : await readGenerationConfig(folder);
  const pick = <Value>(flag: Value | undefined, fromModel: Value | null | undefined) =>
    flag !== undefined
      ? { value: flag, source: 'flag' as const }
      : fromModel !== null && fromModel !== undefined
        ? { value: fromModel, source: 'generation_config.json' as const }
        : { value: undefined, source: 'default' as const };
  const temperature = pick(configuration.temperature, configuration.temperatureScoring ? generation?.temperature : null);
  const topP = pick(configuration.topP, generation?.topP);
  const topK = pick(configuration.topK, generation?.topK);
  return {
    defaults: {
      maxTokens: configuration.maxTokens,
      temperature: temperature.value ?? 1,
      topP: topP.value ?? 1,
      ...(topK.value !== undefined && topK.value > 0 ? { topK: topK.value } : {}),
    },
    sources: { temperature: temperature.source, topP: topP.source, topK: topK.source },
  };
}
