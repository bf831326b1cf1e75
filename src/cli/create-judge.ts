/**
 * Picks and builds the judge named by `--judge`: `rules` (the default predicates), `policy` (the
 * served engine judges, with the base weights unless `--judge-weights served`) or `openai` (`--judge-url`, `--judge-model`; the API key comes from
 * `CLAWRL_JUDGE_API_KEY`, else `OPENAI_API_KEY`, and is never a flag so it stays out of process
 * listings and shell history).
 */
import { createOpenAIJudgeModel } from '../judge/create-openai-judge-model.js';
import { createPolicyJudgeModel } from '../judge/create-policy-judge-model.js';
import { createPrmJudge } from '../judge/create-prm-judge.js';
import { createRulesJudge } from '../judge/create-rules-judge.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { Judge } from '../spec/judge.js';
import { loadRulesJudgeSpec } from './load-rules-judge-spec.js';

export interface JudgeConfiguration {
  judge: 'rules' | 'policy' | 'openai';
  judgeUrl: string | undefined;
  judgeModel: string | undefined;
  /** `--judge-weights`: what `--judge policy` judges with. */
  judgeWeights: 'base' | 'served';
  /** `--judge-rules`: what `--judge rules` judges by (`load-rules-judge-spec.ts`). */
  judgeRules?: string | undefined;
  /** `--judge-hint-grounding`: the PRM judge drops hint sentences about styles the next state never mentions. */
  judgeHintGrounding?: boolean | undefined;
}

export function judgeApiKeyOf(environment: Record<string, string | undefined>): string | undefined {
  return environment.CLAWRL_JUDGE_API_KEY ?? environment.OPENAI_API_KEY;
}

/** `engine` is only used by `--judge policy`. */
export function createJudge(
  configuration: JudgeConfiguration,
  engine: InferenceEngine | undefined,
  environment: Record<string, string | undefined> = process.env,
): Judge {
  switch (configuration.judge) {
    case 'rules':
      return createRulesJudge(loadRulesJudgeSpec(configuration.judgeRules));
    case 'policy':
      if (engine === undefined) {
        throw new ClawrlError('configuration_error', '--judge policy needs the served engine; use --judge openai or rules here.', {
          param: 'judge',
        });
      }
      return createPrmJudge({
        judgeId: 'policy',
        modelName: engine.modelId,
        groundHints: configuration.judgeHintGrounding === true,
        model: createPolicyJudgeModel(engine, { weights: configuration.judgeWeights }),
      });
    case 'openai': {
      if (configuration.judgeUrl === undefined || configuration.judgeModel === undefined) {
        throw new ClawrlError('configuration_error', '--judge openai needs --judge-url <url> and --judge-model <name> (CLAWRL_JUDGE_URL, CLAWRL_JUDGE_MODEL).', {
          param: configuration.judgeUrl === undefined ? 'judgeUrl' : 'judgeModel',
        });
      }
      const apiKey = judgeApiKeyOf(environment);
      return createPrmJudge({
        judgeId: 'openai',
        modelName: configuration.judgeModel,
        groundHints: configuration.judgeHintGrounding === true,
        model: createOpenAIJudgeModel({
          baseUrl: configuration.judgeUrl,
          model: configuration.judgeModel,
          ...(apiKey === undefined ? {} : { apiKey }),
        }),
      });
    }
  }
}
