/**
 * What the trainer checks at start-up: can this training engine run the configured algorithm?
 * A remote service computes only the losses and terms it declares (`TrainingEngineCapabilities`),
 * and a loss that takes the rollout as the old policy (Tinker's `ppo`, `importance_sampling`) has
 * no place for terms that need another one, so a combination it cannot run is refused with one
 * line naming the option to change, rather than trained as some other objective.
 */
import type { TrainingEngineCapabilities, TrainingLossName } from '../../spec/training-engine.js';
import { decoupledFormOf, trainingLossOf, type PolicyLossOptions } from './policy-loss.js';

export interface TrainingPlan {
  /** `--loss`. */
  loss: TrainingLossName;
  /** The loss settings: `--kl-coefficient`, the recipe's anchor; the clip bounds. */
  lossOptions: PolicyLossOptions;
  /** Recipe `trainEpochs`. */
  trainEpochs: number;
  /** Recipe `opdSupportK` when the method distils (opd, combine); 0 builds no support sets. */
  supportTopK: number;
}

export interface TrainingCapabilityProblem {
  /** The configuration key to change. */
  option: string;
  message: string;
}

/** The first thing `engine` cannot do of `plan`, or null when it can run all of it. */
export function trainingCapabilityProblem(
  plan: TrainingPlan,
  engine: { engineId: string; capabilities: TrainingEngineCapabilities },
): TrainingCapabilityProblem | null {
  const { capabilities } = engine;
  const cannot = `The training engine ${engine.engineId} cannot`;
  if (!capabilities.losses.includes(plan.loss)) {
    return { option: 'loss', message: `${cannot} compute the loss ${plan.loss} (it computes ${capabilities.losses.join(', ')}): change --loss.` };
  }
  const kl = plan.lossOptions.klCoefficient;
  const anchor = plan.lossOptions.anchorCoefficient ?? 0;
  if (decoupledFormOf(trainingLossOf(plan.loss, plan.lossOptions)).proximalIsRollout) {
    const rolloutIsOld = `The loss ${plan.loss} takes the rollout as the old policy`;
    if (kl > 0) return { option: 'klCoefficient', message: `${rolloutIsOld} and has no KL term (--kl-coefficient ${kl}): set --kl-coefficient 0 or --loss decoupled_ppo.` };
    if (anchor > 0) return { option: 'anchorCoefficient', message: `${rolloutIsOld} and has no anchor (recipe anchorCoefficient ${anchor}): set anchorCoefficient 0 or --loss decoupled_ppo.` };
    if (plan.supportTopK > 0) {
      return { option: 'opdSupportK', message: `${rolloutIsOld}, which OPD support tokens were never sampled from (recipe opdSupportK ${plan.supportTopK}): set opdSupportK 0 or --loss decoupled_ppo.` };
    }
    if (plan.trainEpochs > 1) {
      return { option: 'trainEpochs', message: `${rolloutIsOld}, so later passes over a batch cannot be clipped against the first (recipe trainEpochs ${plan.trainEpochs}): set trainEpochs 1 or --loss decoupled_ppo.` };
    }
  }
  if (kl > 0 && !capabilities.referenceLogprobs) return { option: 'klCoefficient', message: `${cannot} score the base model for the KL term (--kl-coefficient ${kl}): set --kl-coefficient 0.` };
  if (anchor > 0 && !capabilities.anchor) return { option: 'anchorCoefficient', message: `${cannot} compute the anchor to the base model (recipe anchorCoefficient ${anchor}): set anchorCoefficient 0.` };
  if (plan.supportTopK > 0 && !capabilities.supportSets) {
    return { option: 'opdSupportK', message: `${cannot} train OPD support sets (recipe opdSupportK ${plan.supportTopK}): set opdSupportK 0 to distil on the sampled token.` };
  }
  if (plan.trainEpochs > 1 && !capabilities.proximalLogprobs) {
    return { option: 'trainEpochs', message: `${cannot} take proximal log-probs for several passes over a batch (recipe trainEpochs ${plan.trainEpochs}): set trainEpochs 1.` };
  }
  return null;
}
