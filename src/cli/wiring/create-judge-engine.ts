/**
 * The engine of a dedicated judge model: `--judge policy` judges with the served engine unless a
 * judge model of its own is named (`--judge-model`) or, serving the built-in model `builtin:tiny`,
 * the built-in judge model `builtin:tiny-judge` is the default. A dedicated judge model runs in a
 * local engine of its own and is never trained: its verdicts do not drift with the policy, and it
 * is trained for judging alone (docs/builtin-model.md).
 */
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import { dedicatedJudgeModelOf, type JudgeConfiguration } from './create-judge.js';
import { createInferenceEngine, type EngineConfiguration } from './create-inference-engine.js';

/** A local engine for the dedicated judge model, or undefined when the served engine judges. */
export async function createJudgeEngine(configuration: JudgeConfiguration & EngineConfiguration, options: { logger?: Logger } = {}): Promise<InferenceEngine | undefined> {
  const model = dedicatedJudgeModelOf(configuration);
  if (model === null) return undefined;
  options.logger?.info('judging with a dedicated judge model', { judgeModel: model });
  // Its own local engine: the served engine's adapters, upstream and trained versions are the policy's.
  return createInferenceEngine({ ...configuration, engine: 'local', model, servedModelName: [model], promptOverflow: 'fit', adapterDir: undefined }, options);
}
