/**
 * Picks and builds the inference engine named by the configuration. The only place that knows
 * every engine adapter.
 */
import { existsSync } from 'node:fs';
import type { z } from 'zod';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalInferenceEngine } from '../../engines/local/create-local-inference-engine.js';
import { createOpenAICompatibleEngine } from '../../engines/openai-compatible/create-openai-compatible-engine.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { createTinkerClient } from '../../engines/tinker/create-tinker-client.js';
import { createTinkerInferenceEngine } from '../../engines/tinker/create-tinker-inference-engine.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { PolicyRegistry } from '../../spec/policy-registry.js';
import { configurationSections } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { tinkerApiKeyOf } from '../configuration/tinker-api-key.js';
import { missingModelFolderMessage } from './missing-model-folder-message.js';

/** The engine component of the configuration schema (`--engine`, `--model`, `--upstream`, ...). */
export type EngineConfiguration = Resolved<z.infer<typeof configurationSections.engine>>;

/**
 * The names clients use, the first one the engine's: `--served-model-name` as given, as vLLM
 * does; by default the model name, and for a model folder its folder name first.
 */
export function servedModelNamesOf(configuration: Pick<EngineConfiguration, 'model' | 'servedModelName'>): string[] {
  if (configuration.servedModelName.length > 0) return [...new Set(configuration.servedModelName)];
  const looksLikePath = configuration.model.startsWith('.') || configuration.model.startsWith('/');
  return looksLikePath ? [...new Set([path.basename(path.resolve(configuration.model)), configuration.model])] : [configuration.model];
}

/** The engine's own name for the model: the first served name. */
export function servedModelNameOf(configuration: Pick<EngineConfiguration, 'model' | 'servedModelName'>): string {
  return servedModelNamesOf(configuration)[0] ?? configuration.model;
}

/** The shipped built-in model, relative to the package root (dist/cli/wiring/ → ../../../models). */
export const builtinModelDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'models', 'builtin-tiny');

/** The built-in judge model `builtin:tiny-judge` (docs/builtin-model.md), beside the built-in model. */
export const builtinJudgeModelName = 'builtin:tiny-judge';
export const builtinJudgeModelDirectory = path.resolve(builtinModelDirectory, '..', 'builtin-tiny-judge');

const builtinFolders: Record<string, string> = { 'builtin:tiny': builtinModelDirectory, [builtinJudgeModelName]: builtinJudgeModelDirectory };

/** The model's folder when `--model` names one on disk (a built-in model, or a path holding config.json), else null. */
export function modelFolderOf(model: string): string | null {
  const directory = builtinFolders[model] ?? path.resolve(model);
  return existsSync(path.join(directory, 'config.json')) ? directory : null;
}

/** A model folder on disk for `--model`: `builtin:tiny` or a path. */
export function localModelDirectoryOf(model: string): string {
  const folder = modelFolderOf(model);
  if (folder !== null) return folder;
  if (model === 'builtin:tiny') {
    throw new ClawrlError(
      'configuration_error',
      `The built-in model is missing from ${builtinModelDirectory}. Rebuild it with \`clawrl pretrain-tiny\`, or pass --model <Hugging Face model folder>.`,
      { param: 'model' },
    );
  }
  if (model === builtinJudgeModelName) {
    throw new ClawrlError(
      'configuration_error',
      `The built-in judge model is missing from ${builtinJudgeModelDirectory}. Rebuild it with \`clawrl pretrain-tiny --corpus judge --from models/builtin-tiny\` (docs/builtin-model.md), or judge with the policy itself: --judge-model builtin:tiny.`,
      { param: 'judgeModel' },
    );
  }
  if (model.startsWith('builtin:')) {
    throw new ClawrlError('configuration_error', `Unknown built-in model '${model}'; the built-in models are builtin:tiny and ${builtinJudgeModelName}.`, { param: 'model' });
  }
  throw new ClawrlError('configuration_error', missingModelFolderMessage(model), { param: 'model' });
}

/** The model name requests to a remote engine carry: `--upstream-model`, else `--model` (on SGLang, its served name). */
export function upstreamModelOf(configuration: Pick<EngineConfiguration, 'engine' | 'model' | 'servedModelName' | 'upstreamModel'>): string {
  return configuration.upstreamModel ?? (configuration.engine === 'sglang' ? servedModelNameOf(configuration) : configuration.model);
}

/** Where vllm and sglang read trained versions from; the model folder full-weight versions copy their config from. */
function adapterOptionsOf(configuration: EngineConfiguration): { adapterDirectory?: string; modelDirectory?: string } {
  if (configuration.adapterDir === undefined || configuration.engine === 'openai' || configuration.engine === 'local') return {};
  const modelDirectory = modelFolderOf(configuration.model);
  // The server is told this path: it must be absolute, the same on both sides of the shared volume.
  return { adapterDirectory: path.resolve(configuration.adapterDir), ...(modelDirectory === null ? {} : { modelDirectory }) };
}

export interface CreateInferenceEngineOptions {
  /** Where an engine says what it works around; nothing is logged without it. */
  logger?: Logger;
  /**
   * The record store's policy versions: an engine that serves many at once (the local engine, vLLM
   * and SGLang) loads a version a request names from here when it does not hold it.
   */
  policies?: Pick<PolicyRegistry, 'getPolicyArtifact'>;
  environment?: Record<string, string | undefined>;
}

export async function createInferenceEngine(configuration: EngineConfiguration, options: CreateInferenceEngineOptions = {}): Promise<InferenceEngine> {
  const engine = await createEngine(configuration, options);
  const policies = options.policies;
  if (policies !== undefined) {
    engine.setPolicyArtifactSource?.(async (version) => {
      const stored = await policies.getPolicyArtifact(version);
      return stored === null ? null : { version, kind: stored.kind, files: stored.files };
    });
  }
  return engine;
}

async function createEngine(configuration: EngineConfiguration, options: CreateInferenceEngineOptions): Promise<InferenceEngine> {
  const environment = options.environment ?? process.env;
  const servedModelId = servedModelNameOf(configuration);
  switch (configuration.engine) {
    case 'local':
      return createLocalInferenceEngine({
        modelDirectory: localModelDirectoryOf(configuration.model),
        modelId: servedModelId,
        // The built-in model's 1,024 positions cannot hold an agent's prompt; a real model keeps its window's error.
        fitPrompts: (configuration.promptOverflow ?? (configuration.model === 'builtin:tiny' ? 'fit' : 'error')) === 'fit',
        prefixCacheBytes: configuration.prefixCache * 1024 * 1024,
        batching: { maxRunningSequences: configuration.maxRunningSequences, kvCacheBytes: configuration.kvCache * 1024 * 1024, prefillChunkTokens: configuration.prefillChunk },
        maxResidentAdapters: configuration.maxResidentAdapters,
      });
    case 'openai':
    case 'vllm':
    case 'sglang': {
      if (configuration.promptOverflow === 'fit') {
        throw new ClawrlError('configuration_error', `--prompt-overflow fit works with --engine local only; the ${configuration.engine} engine answers a prompt over its window with its own error.`, {
          param: 'promptOverflow',
        });
      }
      if (configuration.upstream === undefined) {
        throw new ClawrlError('configuration_error', `--engine ${configuration.engine} needs --upstream <url> (CLAWRL_UPSTREAM).`, {
          param: 'upstream',
        });
      }
      const renderer = configuration.engine === 'sglang' ? await loadChatRenderer(configuration.model) : undefined;
      return createOpenAICompatibleEngine({
        baseUrl: configuration.upstream,
        model: upstreamModelOf(configuration),
        servedModelId,
        flavor: configuration.engine,
        timeoutMs: configuration.upstreamTimeout,
        maxLoadedAdapters: configuration.upstreamMaxLoras,
        ...(configuration.upstreamApiKey === undefined ? {} : { apiKey: configuration.upstreamApiKey }),
        ...(configuration.upstreamAdminApiKey === undefined ? {} : { adminApiKey: configuration.upstreamAdminApiKey }),
        ...(renderer === undefined ? {} : { renderer }),
        ...adapterOptionsOf(configuration),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
    }
    case 'tinker': {
      if (configuration.tinkerUrl === undefined) {
        throw new ClawrlError('configuration_error', '--engine tinker needs --tinker-url <url> (CLAWRL_TINKER_URL).', { param: 'tinkerUrl' });
      }
      // Prompts are rendered here, with the template of the tokenizer folder --model names.
      const renderer = await loadChatRenderer(localModelDirectoryOf(configuration.model));
      const client = await createTinkerClient({ url: configuration.tinkerUrl, apiKey: tinkerApiKeyOf(environment, '--engine tinker') });
      try {
        return await createTinkerInferenceEngine({ client, baseModel: configuration.tinkerBaseModel ?? servedModelId, servedModelId, renderer });
      } catch (error) {
        await client.close();
        throw error;
      }
    }
  }
}
