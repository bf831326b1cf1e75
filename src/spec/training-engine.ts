/**
 * The `TrainingEngine` seam, in the shape of the Tinker API so a remote training service and the
 * local trainer worker are interchangeable: forward-backward on a batch with a named loss
 * (gradients accumulate across calls), an optimizer step, publishing the weights as a policy
 * artifact, and saving / loading the full training state (weights and optimizer moments).
 * Implementations: the local worker-thread engine. Every implementation runs
 * `runTrainingEngineContract` from `src/engines/training-engine.contract.ts`.
 *
 * Log-probs are taken under log_softmax(logits / temperature) per datum, the distribution the
 * sampler recorded rollout log-probs under, so importance ratios compare like with like.
 */
import type { PolicyArtifact, PolicyVersion } from './inference-engine.js';

/** One training sequence: a prompt and the response the loss is over. */
export interface TrainingDatum {
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** One entry per response token each. */
  lossMask: number[];
  advantages: number[];
  rolloutLogprobs: number[];
  /** The sampling temperature of the rollout (> 0). */
  temperature: number;
  /**
   * ℓ_old, one per response token: the trainer's log-probs before the first of several passes over
   * one batch (`--train-epochs`). The surrogate's ratio and the importance weight are taken against
   * them, so the clip bounds how far the later passes move a token. Default: the current log-probs
   * (the first pass, where the ratio is 1).
   */
  proximalLogprobs?: number[];
  /**
   * OPD over a support set (`core/build-samples.ts`): one entry per response token, the tokens
   * whose log-probs the loss also moves at that position and the advantage on each (same
   * clipped surrogate as the sampled token's, with no importance weight: the set is not sampled).
   */
  support?: SupportTarget[];
}

export interface SupportTarget {
  tokenIds: number[];
  advantages: number[];
  /** ℓ_old of each token id, as for the datum's `proximalLogprobs`. */
  proximalLogprobs?: number[];
}

/** The PPO-style clipped surrogate with truncated importance sampling (`src/core/policy-loss.ts`). */
export interface PolicyGradientLossConfig {
  name: 'ppo';
  clipLow: number;
  clipHigh: number;
  importanceSamplingCap: number;
  klCoefficient: number;
  /** α of the anchor to the base model's top `anchorTopK` tokens (`core/policy-loss.ts`); default 0, off. */
  anchorCoefficient?: number;
  /** Default 8. */
  anchorTopK?: number;
}

export interface ForwardBackwardInput {
  data: TrainingDatum[];
  loss: PolicyGradientLossConfig;
  /**
   * Loss tokens (Σ mask) of the whole batch when it is split over several calls, so every call
   * divides by the same count; default: this call's own.
   */
  batchLossTokens?: number;
}

export interface ForwardBackwardOutput {
  /** This call's share of the batch loss. */
  loss: number;
  /** The trainer's log-probs of each datum's response tokens, before the update. */
  logprobs: number[][];
  /** The base model's log-probs, when the KL term needed them. */
  referenceLogprobs: number[][] | null;
  /** The trainer's log-probs of each datum's support tokens (same layout), null for data without. */
  supportLogprobs?: (number[][] | null)[];
  /** Per datum, the anchor's KL(q ‖ π) at each response token, when the anchor is on. */
  anchorKl?: number[][] | null;
}

export interface OptimizerStepInput {
  /** Overrides the engine's learning rate for this step. */
  learningRate?: number;
}

export interface OptimizerStepOutput {
  /** Global gradient norm before clipping. */
  gradientNorm: number;
  /** Optimizer steps taken so far (restored by `loadState`). */
  step: number;
  learningRate: number;
}

export interface TrainingEngineInfo {
  /** What the optimizer updates; `full` publishes full weights, `lora` PEFT adapters. */
  trainParams: 'lora' | 'full';
  modelId: string;
  learningRate: number;
}

export interface TrainingEngine {
  readonly engineId: string;
  readonly info: TrainingEngineInfo;
  /** Accumulates gradients of the loss over `data`. */
  forwardBackward(input: ForwardBackwardInput): Promise<ForwardBackwardOutput>;
  /** AdamW on the accumulated gradients, then clears them. */
  optimizerStep(input?: OptimizerStepInput): Promise<OptimizerStepOutput>;
  /** The current weights as the artifact of `version` (an adapter or full weights). */
  publishWeights(version: PolicyVersion): Promise<PolicyArtifact>;
  /**
   * Saves weights and optimizer state under `name`; resolves with an opaque reference once the
   * state is durable. Saving the same name again replaces it.
   */
  saveState(name: string): Promise<string>;
  /** Restores what `saveState` saved; `not_found` for an unknown reference. */
  loadState(reference: string): Promise<void>;
  /**
   * Restarts training from a published version's weights with fresh optimizer state (a rollback:
   * the next step continues from what is served). A `base` artifact restores the base model.
   */
  resetWeights(artifact: PolicyArtifact): Promise<void>;
  /** Releases the worker or connection. Idempotent. */
  close(): Promise<void>;
}
