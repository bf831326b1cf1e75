/**
 * Picks and builds the judge named by `--judge`: `rules` (the default predicates), `policy` (the
 * served engine judges, with the base weights unless `--judge-weights served`) or `openai` (`--judge-url`, `--judge-model`; the API key comes from
 * `CLAWRL_JUDGE_API_KEY`, else `OPENAI_API_KEY`, and is never a flag so it stays out of process
 * listings and shell history).
 *
 * `--judge policy` judges with a dedicated judge model when there is one (`dedicatedJudgeModelOf`:
 * `--judge-model`, or `builtin:tiny-judge` by default for `builtin:tiny`), else with the served one.
 *
 * A PRM judge shares its prompt budget out of its model's context window: the window the engine
 * reports (`--judge policy`) or the endpoint's `/v1/models` (`--judge openai`), else 32768 tokens,
 * unless `judgeContextTokens` says otherwise. Only the built-in models' judge (`--judge policy`
 * judging with `builtin:tiny` or `builtin:tiny-judge`) keeps the small fixed budgets it was trained on and filters its hints
 * with the built-in style reader (`src/builtin/builtin-judge-options.ts`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { builtinJudgeOptions } from '../../builtin/builtin-judge-options.js';
import { defaultJudgeContextTokens, estimateTokens, type JudgeContextWindow } from '../../core/judge-prompt-budget.js';
import { createOpenAIJudgeModel, openAIJudgeContextWindow } from '../../judge/create-openai-judge-model.js';
import { createPolicyJudgeModel } from '../../judge/create-policy-judge-model.js';
import { createPrmJudge } from '../../judge/create-prm-judge.js';
import { createRulesJudge } from '../../judge/create-rules-judge.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Judge } from '../../spec/judge.js';
import { builtinJudgeModelDirectory, builtinJudgeModelName, builtinModelDirectory } from './create-inference-engine.js';
import { loadRulesJudgeSpec } from '../configuration/load-rules-judge-spec.js';

export interface JudgeConfiguration {
  judge: 'rules' | 'policy' | 'openai';
  judgeUrl: string | undefined;
  judgeModel: string | undefined;
  /** `--judge-weights`: what `--judge policy` judges with. */
  judgeWeights: 'base' | 'served';
  /** `--judge-rules`: what `--judge rules` judges by (`load-rules-judge-spec.ts`). */
  judgeRules?: string | undefined;
  /** `--judge-hint-grounding`: the built-in model's judge drops hint sentences about styles the next state never mentions. */
  judgeHintGrounding?: boolean | undefined;
  /** `--model`: `--judge policy` judges with it, and `builtin:tiny` gets the built-in model's judge. */
  model: string;
  /** The PRM judge model's context window in tokens, over what its engine or endpoint reports (and the default of 32768). */
  judgeContextTokens?: number | undefined;
}

export function judgeApiKeyOf(environment: Record<string, string | undefined>): string | undefined {
  return environment.CLAWRL_JUDGE_API_KEY ?? environment.OPENAI_API_KEY;
}

/** Whether `--model` is the built-in model, by name or by its folder. */
export function isBuiltinModel(model: string): boolean {
  return model === 'builtin:tiny' || path.resolve(model) === builtinModelDirectory;
}

/** Whether a judge model is the built-in judge model, by name or by its folder. */
export function isBuiltinJudgeModel(model: string): boolean {
  return model === builtinJudgeModelName || path.resolve(model) === builtinJudgeModelDirectory;
}

/**
 * The model `--judge policy` judges with when it is not the served one, else null (the served
 * engine judges). `--judge-model` names it; without it `builtin:tiny` gets `builtin:tiny-judge`,
 * unless `--judge-weights served` asks for the served weights themselves. Naming the served
 * model (`--judge-model builtin:tiny`) makes the policy judge itself, as before the judge model.
 */
export function dedicatedJudgeModelOf(configuration: Pick<JudgeConfiguration, 'judge' | 'judgeModel' | 'judgeWeights' | 'model'>): string | null {
  if (configuration.judge !== 'policy') return null;
  const named = configuration.judgeModel;
  if (named === undefined) return isBuiltinModel(configuration.model) && configuration.judgeWeights === 'base' ? builtinJudgeModelName : null;
  const servedItself = named === configuration.model || (isBuiltinModel(named) && isBuiltinModel(configuration.model));
  return servedItself ? null : named;
}

/**
 * Tokens as the policy model counts them, when `--model` is a model folder with a tokenizer;
 * otherwise (an upstream model name) the estimate of `estimateTokens`.
 */
async function policyTokenCounter(model: string): Promise<(text: string) => number> {
  if (!existsSync(path.join(path.resolve(model), 'tokenizer.json'))) return estimateTokens;
  try {
    const renderer = await loadChatRenderer(path.resolve(model));
    return (text) => renderer.encode(text).length;
  } catch {
    // A folder the engine serves but whose tokenizer this loader cannot read: judge on the estimate.
    return estimateTokens;
  }
}

function policyContextWindow(configuration: JudgeConfiguration, engine: InferenceEngine): () => Promise<JudgeContextWindow> {
  return async () => ({
    tokens: configuration.judgeContextTokens ?? engine.contextLength ?? defaultJudgeContextTokens,
    countTokens: await policyTokenCounter(configuration.model),
  });
}

/**
 * `engine` is only used by `--judge policy`: the dedicated judge model's engine when there is one
 * (`dedicatedJudgeModelOf`, `createJudgeEngine`), else the served engine.
 */
export function createJudge(
  configuration: JudgeConfiguration,
  engine: InferenceEngine | undefined,
  environment: Record<string, string | undefined> = process.env,
): Judge {
  switch (configuration.judge) {
    case 'rules':
      return createRulesJudge(loadRulesJudgeSpec(configuration.judgeRules));
    case 'policy': {
      if (engine === undefined) {
        throw new ClawrlError('configuration_error', '--judge policy needs the served engine; use --judge openai or rules here.', {
          param: 'judge',
        });
      }
      // With a dedicated judge model `engine` is its own (createJudgeEngine): never trained, so its base weights.
      const dedicated = dedicatedJudgeModelOf(configuration);
      const judgeModel = dedicated ?? configuration.model;
      const model = createPolicyJudgeModel(engine, { weights: dedicated === null ? configuration.judgeWeights : 'base' });
      const judgeOf =
        isBuiltinModel(judgeModel) || isBuiltinJudgeModel(judgeModel)
          ? builtinJudgeOptions({ grounding: configuration.judgeHintGrounding === true })
          : { contextWindow: policyContextWindow({ ...configuration, model: judgeModel }, engine) };
      return createPrmJudge({ judgeId: 'policy', modelName: engine.modelId, model, ...judgeOf });
    }
    case 'openai': {
      if (configuration.judgeUrl === undefined || configuration.judgeModel === undefined) {
        throw new ClawrlError('configuration_error', '--judge openai needs --judge-url <url> and --judge-model <name> (CLAWRL_JUDGE_URL, CLAWRL_JUDGE_MODEL).', {
          param: configuration.judgeUrl === undefined ? 'judgeUrl' : 'judgeModel',
        });
      }
      const apiKey = judgeApiKeyOf(environment);
      const endpoint = { baseUrl: configuration.judgeUrl, model: configuration.judgeModel, ...(apiKey === undefined ? {} : { apiKey }) };
      const explicitTokens = configuration.judgeContextTokens;
      return createPrmJudge({
        judgeId: 'openai',
        modelName: configuration.judgeModel,
        model: createOpenAIJudgeModel(endpoint),
        contextWindow:
          explicitTokens === undefined
            ? openAIJudgeContextWindow(endpoint)
            : async () => ({ tokens: explicitTokens, countTokens: estimateTokens }),
      });
    }
  }
}
