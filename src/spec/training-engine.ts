/**
 * The `TrainingEngine` seam, in the shape of the Tinker API so a remote training service and the
 * local trainer worker are interchangeable: forward-backward on a batch with a named loss
 * (gradients accumulate across calls), an optimizer step, publishing the weights as a policy
 * artifact, and saving / loading the full training state (weights and optimizer moments).
 * Implementations: the local worker-thread engine (every loss and term). Every implementation runs
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
   * OPD over a support set (`core/rl/build-samples.ts`): one entry per response token, the tokens
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

/**
 * Losses are named values. Every loss is a per-token term summed over the loss tokens and divided
 * by `batchLossTokens` (token-level aggregation), whatever the wire of a remote service does; an
 * engine declares the losses and terms it computes (`TrainingEngineCapabilities`) and rejects the
 * rest with `unsupported`, so a trainer never silently gets another objective than it asked for.
 * With ℓ the trainer's log-prob, μ the rollout log-prob, ℓ_old the proximal log-prob and A the
 * token's advantage:
 *
 * - `decoupled_ppo` (clawrl's own, `src/core/rl/policy-loss.ts`; decoupled PPO as in AReaL): the
 *   clipped surrogate on ρ = exp(ℓ − ℓ_old) times the truncated importance weight
 *   min(exp(ℓ_old − μ), C), with optional KL to the base, the anchor and OPD support sets.
 * - `importance_sampling` (Tinker's): −exp(ℓ − μ)·A.
 * - `ppo` (Tinker's): −min(r·A, clip(r, 1 − clipLow, 1 + clipHigh)·A) with r = exp(ℓ − μ): the
 *   rollout is the old policy, there is no separate proximal policy nor importance weight.
 */
export interface DecoupledPpoLoss {
  name: 'decoupled_ppo';
  clipLow: number;
  clipHigh: number;
  importanceSamplingCap: number;
  klCoefficient: number;
  /** α of the anchor to the base model's top `anchorTopK` tokens (`core/rl/policy-loss.ts`); default 0, off. */
  anchorCoefficient?: number;
  /** Default 8. */
  anchorTopK?: number;
}

export interface ImportanceSamplingLoss {
  name: 'importance_sampling';
}

export interface RolloutPpoLoss {
  name: 'ppo';
  clipLow: number;
  clipHigh: number;
}

export type TrainingLoss = DecoupledPpoLoss | ImportanceSamplingLoss | RolloutPpoLoss;
export type TrainingLossName = TrainingLoss['name'];

/** What an engine's `forwardBackward` computes; the trainer checks its configuration against it at start-up. */
export interface TrainingEngineCapabilities {
  losses: readonly TrainingLossName[];
  /** `decoupled_ppo` with `klCoefficient` > 0: the engine scores the base model itself. */
  referenceLogprobs: boolean;
  /** `decoupled_ppo` with `anchorCoefficient` > 0: the base model's top-k at every position. */
  anchor: boolean;
  /** Data with `support` sets (OPD over the student's top-k). */
  supportSets: boolean;
  /** Data with `proximalLogprobs` (several passes over one batch, `--train-epochs`). */
  proximalLogprobs: boolean;
  /**
   * Data sampled at any temperature (log-probs under log_softmax(logits / T)); false: only T = 1.
   * The trainer drops, and counts, samples the engine cannot train instead of failing every step.
   */
  anyTemperature: boolean;
}

export interface ForwardBackwardInput {
  data: TrainingDatum[];
  loss: TrainingLoss;
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
  readonly capabilities: TrainingEngineCapabilities;
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
  /**
   * The engine of lineage `id` (not empty): an adapter of its own on the same base model (a user's,
   * for per-user policies), with its own weights, optimizer state and step count. It begins at the
   * base model and continues from its own latest state on every call; training it leaves every other
   * lineage, this engine's own included, as it was. The engine holds a bounded number of lineages on
   * its training clients and swaps the others out through saved state (`../engines/training-lineages.ts`);
   * a lineage keeps its client from a `forwardBackward` to its `optimizerStep`, so step one lineage
   * before training another where the engine has a single client (the local one). The lineage's
   * `close` does nothing: this engine's closes them all. Optional: an engine without it trains one lineage.
   */
  lineage?(id: string): TrainingEngine;
  /** Releases the worker or connection. Idempotent. */
  close(): Promise<void>;
}
