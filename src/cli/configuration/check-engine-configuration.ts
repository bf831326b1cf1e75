/**
 * The engine options checked before a command opens anything: a wrong `--model` or a missing
 * `--upstream` is the commonest first-run mistake, and reporting it before the store, the bus and
 * the model load makes the answer immediate. `createInferenceEngine` keeps the same checks for
 * its other callers.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { localModelDirectoryOf, type EngineConfiguration } from '../wiring/create-inference-engine.js';

/**
 * `serve` with training on and an engine that cannot serve what it trains: vLLM loads new full
 * weights only by a restart (engines.md §1.7), so training them would silently serve the base;
 * SGLang replaces its weights, so a judge pinned to the base weights would have none to judge with.
 */
export function checkTrainedVersionServing(
  configuration: Pick<EngineConfiguration, 'engine'> & { noTrain: boolean; trainParams: 'lora' | 'full'; judge: string; judgeWeights: 'base' | 'served' },
): void {
  if (configuration.noTrain || configuration.trainParams !== 'full') return;
  if (configuration.engine === 'vllm') {
    throw new ClawrlError(
      'configuration_error',
      '--engine vllm cannot serve full-weight versions (--train-params full) without a restart: train LoRA adapters (--train-params lora, with --adapter-dir), serve with --engine sglang, or pass --no-train.',
      { param: 'train-params' },
    );
  }
  // SGLang swaps its one set of weights: after the first full-weight version the base is gone.
  if (configuration.engine === 'sglang' && configuration.judge === 'policy' && configuration.judgeWeights === 'base') {
    throw new ClawrlError(
      'configuration_error',
      "--judge policy judges with the base weights, which SGLang no longer holds once it serves full-weight versions (--train-params full): judge with the served weights (recipe judgeWeights: 'served'), use --judge openai --judge-url <a server with the base model> or --judge rules, or train LoRA adapters.",
      { param: 'judge' },
    );
  }
}

export function checkEngineConfiguration(
  configuration: Pick<EngineConfiguration, 'engine' | 'model' | 'upstream'> & Partial<Pick<EngineConfiguration, 'tinkerUrl' | 'upstreamAdminApiKey'>>,
): void {
  // Only SGLang tells an admin key from the API key; vLLM would refuse it on every load.
  if (configuration.upstreamAdminApiKey !== undefined && configuration.engine !== 'sglang') {
    throw new ClawrlError('configuration_error', `--upstream-admin-api-key is for --engine sglang (its --admin-api-key); the ${configuration.engine} engine takes one key, --upstream-api-key.`, {
      param: 'upstreamAdminApiKey',
    });
  }
  if (configuration.engine === 'local') {
    localModelDirectoryOf(configuration.model);
    return;
  }
  if (configuration.engine === 'tinker') {
    // The tokenizer folder the prompts are rendered with.
    localModelDirectoryOf(configuration.model);
    if (configuration.tinkerUrl === undefined) throw new ClawrlError('configuration_error', '--engine tinker needs --tinker-url <url> (CLAWRL_TINKER_URL).', { param: 'tinkerUrl' });
    return;
  }
  if (configuration.engine !== 'openai' && configuration.engine !== 'vllm' && configuration.engine !== 'sglang') return;
  if (configuration.upstream === undefined || configuration.upstream === '') {
    throw new ClawrlError(
      'configuration_error',
      `--engine ${configuration.engine} needs --upstream <url> (CLAWRL_UPSTREAM), the base URL of the server that runs the model, e.g. http://127.0.0.1:8000.`,
      { param: 'upstream' },
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(configuration.upstream);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ClawrlError('configuration_error', `--upstream ${configuration.upstream} is not an http:// or https:// URL.`, { param: 'upstream' });
  }
}
