/**
 * What `clawrl rollout --json` prints and `--out` writes as `rollout-<env>-seed<seed>.json`, with
 * its zod schema: the dashboard and the chart read these files back. `reward` is a step's mean
 * outcome reward over its training rollouts; `accuracy` the held-out split's share solved by the
 * served policy after the step, null on steps it was not measured.
 */
import { z } from 'zod';

export const rolloutStepSchema = z.object({
  step: z.number().int().min(1),
  reward: z.number(),
  accuracy: z.number().min(0).max(1).nullable(),
  /** Mean PRM vote over the step's turns; null in outcome mode. */
  processReward: z.number().nullable(),
  groups: z.number().int(),
  /** Groups whose rollouts all got the same reward: the trainer gives them no advantage, drops and counts them. */
  zeroVarianceGroups: z.number().int(),
  /**
   * Groups in which the PRM's process rewards differed between rollouts at some turn, the only groups
   * where they can change an advantage; null in outcome mode. Optional: results written before it.
   */
  processVariedGroups: z.number().int().nullable().optional(),
  turns: z.number().int(),
  /** Turns whose reward differed within their group at their turn index: the ones the trainer's group baseline gives an advantage. */
  trainedTurns: z.number().int(),
  /** The last `POST /admin/training/step` outcome: trained, idle, all-stale, no-signal. */
  train: z.string(),
  policyVersion: z.number().int(),
});
export type RolloutStep = z.infer<typeof rolloutStepSchema>;

export const rolloutResultSchema = z.object({
  env: z.string(),
  group: z.number().int().min(1),
  tasksPerStep: z.number().int().min(1),
  seed: z.number().int(),
  rewardMode: z.enum(['outcome', 'outcome+process']),
  /** `--normalize-std`: the recipe's `groupNormalizeStd` of the server this run started; null with `--url` (that server's recipe decides). */
  normalizeStd: z.boolean().nullable(),
  model: z.string(),
  evalSize: z.number().int(),
  evalEvery: z.number().int(),
  /** Temperature of the held-out episodes (`--eval-temperature`); absent or null: the training rollouts' own. */
  evalTemperature: z.number().min(0).max(2).nullable().optional(),
  /** Held-out accuracy of the base policy, before the first step. */
  baseAccuracy: z.number().min(0).max(1),
  finalAccuracy: z.number().min(0).max(1),
  steps: z.array(rolloutStepSchema),
  /** The flags of the server this run started; null with `--url`. */
  serverArguments: z.array(z.string()).nullable(),
  startedAt: z.string(),
  durationSeconds: z.number(),
});
export type RolloutResult = z.infer<typeof rolloutResultSchema>;

export function rolloutResultFileName(result: Pick<RolloutResult, 'env' | 'seed'>): string {
  const env = result.env.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'env';
  return `rollout-${env}-seed${result.seed}.json`;
}
