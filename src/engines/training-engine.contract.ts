/**
 * The behaviour every `TrainingEngine` must show: gradients of the named loss, an optimizer step
 * that moves the policy the way the advantages say, published weights, and saved state that
 * restores training exactly. Implementation-agnostic: it talks to the engine through the seam.
 * It trains with a loss the engine declares (`decoupled_ppo` where it can, else Tinker's `ppo`
 * or `importance_sampling`); each term-specific case (KL, anchor, support sets, proximal
 * log-probs) runs where `engine.capabilities` declares the term, and where it does not, the
 * engine must refuse the term with `unsupported` rather than compute another objective.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { DecoupledPpoLoss, TrainingDatum, TrainingEngine, TrainingLoss, TrainingLossName } from '../spec/training-engine.js';

export interface TrainingEngineContractOptions {
  name: string;
  createEngine: () => Promise<TrainingEngine>;
  /** Token ids valid for the model. */
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** It implements `lineage` (independent adapters, one per user). */
  lineages?: boolean;
}

const decoupled: DecoupledPpoLoss = { name: 'decoupled_ppo', clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0 };
const isUnsupported = (error: unknown) => ClawrlError.isInstance(error) && error.code === 'unsupported';

/** The loss the general cases train with: the first the engine declares, in this order. */
function trainingLossOf(engine: TrainingEngine): TrainingLoss {
  const { losses } = engine.capabilities;
  if (losses.includes('decoupled_ppo')) return decoupled;
  if (losses.includes('ppo')) return { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 };
  if (losses.includes('importance_sampling')) return { name: 'importance_sampling' };
  throw new Error(`the engine declares no loss the contract knows: ${losses.join(', ')}`);
}
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

export function runTrainingEngineContract(options: TrainingEngineContractOptions): void {
  describe(`TrainingEngine contract: ${options.name}`, () => {
    let engine: TrainingEngine;
    let datum: TrainingDatum;
    let trainingLoss: TrainingLoss;

    beforeAll(async () => {
      engine = await options.createEngine();
      trainingLoss = trainingLossOf(engine);
      const length = options.responseTokenIds.length;
      datum = {
        promptTokenIds: options.promptTokenIds,
        responseTokenIds: options.responseTokenIds,
        lossMask: Array.from({ length }, () => 1),
        advantages: Array.from({ length }, () => 1),
        rolloutLogprobs: Array.from({ length }, () => -3),
        temperature: 1,
      };
    });
    afterAll(async () => {
      await engine.close();
    });

    const logprobsNow = async () => {
      // A zero advantage gives a zero gradient; the call only reads the log-probs.
      const output = await engine.forwardBackward({ data: [{ ...datum, advantages: datum.advantages.map(() => 0) }], loss: trainingLoss });
      return output.logprobs[0] ?? [];
    };

    it('raises the log-probs of positively rewarded tokens, saves and restores state exactly, and resets to the base', async () => {
      const initial = await logprobsNow();
      expect(initial).toHaveLength(options.responseTokenIds.length);
      for (const value of initial) expect(value).toBeLessThan(0);
      await engine.optimizerStep();

      const first = await engine.forwardBackward({ data: [datum], loss: trainingLoss });
      expect(Number.isFinite(first.loss)).toBe(true);
      expect(first.referenceLogprobs).toBeNull();
      const stepped = await engine.optimizerStep();
      expect(stepped.gradientNorm).toBeGreaterThan(0);
      const afterStep = await logprobsNow();
      expect(mean(afterStep)).toBeGreaterThan(mean(initial));

      const artifact = await engine.publishWeights(1);
      expect(artifact.version).toBe(1);
      expect(artifact.kind).toBe(engine.info.trainParams === 'full' ? 'full' : 'adapter');
      expect(Object.keys(artifact.files).length).toBeGreaterThan(0);

      const reference = await engine.saveState('contract-step-1');
      await engine.forwardBackward({ data: [datum], loss: trainingLoss });
      await engine.optimizerStep();
      expect(mean(await logprobsNow())).toBeGreaterThan(mean(afterStep));
      await engine.loadState(reference);
      const restored = await logprobsNow();
      restored.forEach((value, index) => expect(value).toBeCloseTo(afterStep[index] ?? Number.NaN, 5));
      await engine.optimizerStep();
      // The step count resumes from the saved state.
      await engine.forwardBackward({ data: [datum], loss: trainingLoss });
      expect((await engine.optimizerStep()).step).toBe(stepped.step + 2);

      await engine.resetWeights({ version: 0, kind: 'base', files: {} });
      const reset = await logprobsNow();
      reset.forEach((value, index) => expect(value).toBeCloseTo(initial[index] ?? Number.NaN, 5));
      await engine.resetWeights(artifact);
      (await logprobsNow()).forEach((value, index) => expect(value).toBeCloseTo(afterStep[index] ?? Number.NaN, 4));
      await engine.optimizerStep();
    });

    it('computes reference log-probs of the base when the KL term is on, or refuses the term', async () => {
      const withKl = engine.forwardBackward({ data: [datum], loss: { ...decoupled, klCoefficient: 0.1 } });
      if (!engine.capabilities.referenceLogprobs || !engine.capabilities.losses.includes('decoupled_ppo')) {
        await expect(withKl).rejects.toSatisfy(isUnsupported);
        return;
      }
      const output = await withKl;
      expect(output.referenceLogprobs?.[0]).toHaveLength(options.responseTokenIds.length);
      await engine.optimizerStep();
    });

    it('moves the log-probs of OPD support tokens by their advantages, not only the sampled ones', async () => {
      // Another token at every position: the prompt's first, which the response never samples there.
      const other = options.promptTokenIds[0] ?? 0;
      const supported = (advantage: number): TrainingDatum => ({
        ...datum,
        advantages: datum.advantages.map(() => 0),
        support: datum.responseTokenIds.map(() => ({ tokenIds: [other], advantages: [advantage] })),
      });
      if (!engine.capabilities.supportSets) {
        await expect(engine.forwardBackward({ data: [supported(1)], loss: trainingLoss })).rejects.toSatisfy(isUnsupported);
        return;
      }
      const supportLogprobsNow = async () => {
        const output = await engine.forwardBackward({ data: [supported(0)], loss: trainingLoss });
        expect(output.supportLogprobs?.[0]).toHaveLength(options.responseTokenIds.length);
        return (output.supportLogprobs?.[0] ?? []).map((position) => position[0] ?? Number.NaN);
      };
      await engine.optimizerStep();
      const before = await supportLogprobsNow();
      await engine.optimizerStep();
      await engine.forwardBackward({ data: [supported(1)], loss: trainingLoss });
      expect((await engine.optimizerStep()).gradientNorm).toBeGreaterThan(0);
      expect(mean(await supportLogprobsNow())).toBeGreaterThan(mean(before));
      await engine.optimizerStep();
      const misaligned = engine.forwardBackward({ data: [{ ...supported(1), support: [{ tokenIds: [other], advantages: [] }] }], loss: trainingLoss });
      await expect(misaligned).rejects.toSatisfy((error: unknown) => ClawrlError.isInstance(error) && error.code === 'invalid_request');
    });

    it('takes the ratio against proximal log-probs, so a later pass stops moving tokens past the clip', async () => {
      if (!engine.capabilities.proximalLogprobs || trainingLoss.name !== 'decoupled_ppo') {
        await expect(engine.forwardBackward({ data: [{ ...datum, proximalLogprobs: datum.rolloutLogprobs }], loss: trainingLoss })).rejects.toSatisfy(isUnsupported);
        return;
      }
      // An optimizer step moves the weights by its momentum even without gradients, so ℓ is read
      // after the last step and before the pass (its zero gradients add nothing).
      await engine.optimizerStep();
      const current = await logprobsNow();
      // ℓ_old one nat below ℓ: ρ = e > 1 + ε_hi, so a positive advantage is clipped and has no gradient.
      await engine.forwardBackward({ data: [{ ...datum, proximalLogprobs: current.map((value) => value - 1) }], loss: trainingLoss });
      expect((await engine.optimizerStep()).gradientNorm).toBe(0);
      await engine.forwardBackward({ data: [{ ...datum, proximalLogprobs: await logprobsNow() }], loss: trainingLoss });
      expect((await engine.optimizerStep()).gradientNorm).toBeGreaterThan(0);
      const misaligned = engine.forwardBackward({ data: [{ ...datum, proximalLogprobs: [0] }], loss: trainingLoss });
      await expect(misaligned).rejects.toSatisfy((error: unknown) => ClawrlError.isInstance(error) && error.code === 'invalid_request');
    });

    it("holds the policy to the base with the anchor: zero at the base, and a pull back once it has moved", async () => {
      const anchored = (coefficient: number): DecoupledPpoLoss => ({ ...decoupled, anchorCoefficient: coefficient, anchorTopK: 4 });
      const still = { ...datum, advantages: datum.advantages.map(() => 0) };
      if (!engine.capabilities.anchor || !engine.capabilities.losses.includes('decoupled_ppo')) {
        await expect(engine.forwardBackward({ data: [still], loss: anchored(1) })).rejects.toSatisfy(isUnsupported);
        return;
      }
      const anchorKlNow = async (coefficient: number) => {
        const output = await engine.forwardBackward({ data: [still], loss: anchored(coefficient) });
        expect(output.anchorKl?.[0]).toHaveLength(options.responseTokenIds.length);
        return mean(output.anchorKl?.[0] ?? []);
      };
      await engine.resetWeights({ version: 0, kind: 'base', files: {} });
      expect(Math.abs(await anchorKlNow(1))).toBeLessThan(1e-4);
      await engine.optimizerStep();
      // Three pushes without the anchor move the policy away from the base.
      for (let push = 0; push < 3; push += 1) {
        await engine.forwardBackward({ data: [datum], loss: trainingLoss });
        await engine.optimizerStep();
      }
      const moved = await anchorKlNow(1);
      expect(moved).toBeGreaterThan(1e-3);
      expect((await engine.optimizerStep()).gradientNorm).toBeGreaterThan(0);
      for (let pull = 0; pull < 3; pull += 1) {
        await engine.forwardBackward({ data: [still], loss: anchored(1) });
        await engine.optimizerStep();
      }
      expect(await anchorKlNow(1)).toBeLessThan(moved);
      await engine.optimizerStep();
      const without = await engine.forwardBackward({ data: [still], loss: trainingLoss });
      expect(without.anchorKl ?? null).toBeNull();
      await engine.optimizerStep();
    });

    it("computes each loss it declares as the loss's formula over its own log-probs, summed and divided by the batch's loss tokens", async () => {
      await engine.optimizerStep();
      const length = options.responseTokenIds.length;
      // Mixed signs and a masked token, rollout log-probs near the trainer's so both clip sides matter.
      const current = await logprobsNow();
      const mixed: TrainingDatum = {
        ...datum,
        advantages: Array.from({ length }, (_, index) => (index % 2 === 0 ? 1 : -0.5)),
        lossMask: Array.from({ length }, (_, index) => (index === length - 1 ? 0 : 1)),
        rolloutLogprobs: current.map((value, index) => value + (index % 3 === 0 ? 0.5 : -0.1)),
      };
      const batchLossTokens = 2 * mixed.lossMask.reduce((sum, mask) => sum + mask, 0);
      const expected = (name: TrainingLossName, logprobs: number[]): number => {
        const terms = logprobs.map((value, index) => {
          const ratio = Math.exp(value - (mixed.rolloutLogprobs[index] ?? 0));
          const advantage = mixed.advantages[index] ?? 0;
          if (name === 'importance_sampling') return -ratio * advantage;
          const clipped = Math.min(Math.max(ratio, 1 - 0.2), 1 + 0.28);
          return Math.max(-ratio * advantage, -clipped * advantage);
        });
        return terms.reduce((sum, term, index) => sum + term * (mixed.lossMask[index] ?? 0), 0) / batchLossTokens;
      };
      const losses: Record<Exclude<TrainingLossName, 'decoupled_ppo'>, TrainingLoss> = {
        importance_sampling: { name: 'importance_sampling' },
        ppo: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 },
      };
      for (const name of ['importance_sampling', 'ppo'] as const) {
        if (!engine.capabilities.losses.includes(name)) continue;
        const output = await engine.forwardBackward({ data: [mixed], loss: losses[name], batchLossTokens });
        expect(output.loss).toBeCloseTo(expected(name, output.logprobs[0] ?? []), 4);
        await engine.optimizerStep();
      }
    });

    it('rejects misaligned data and unknown saved states with ClawrlErrors', async () => {
      const misaligned = engine.forwardBackward({ data: [{ ...datum, lossMask: [1] }], loss: trainingLoss });
      await expect(misaligned).rejects.toSatisfy((error: unknown) => ClawrlError.isInstance(error) && error.code === 'invalid_request');
      await expect(engine.loadState('never-saved')).rejects.toSatisfy((error: unknown) => ClawrlError.isInstance(error) && error.code === 'not_found');
    });

    it.runIf(options.lineages === true)('trains lineages apart: each begins at the base and continues from its own state, whatever the others do', async () => {
      // The engine's own lineage may hold gradients of the cases above; a step lets its client go.
      await engine.optimizerStep();
      const [first, second] = [engine.lineage?.('user-a'), engine.lineage?.('user-b')];
      if (first === undefined || second === undefined) throw new Error('the engine declares lineages but has no lineage()');
      expect(engine.lineage?.('user-a')).toBe(first);
      // A training pass reports the log-probs before its own update, so each is also a read.
      const train = async (lineage: TrainingEngine) => {
        const output = await lineage.forwardBackward({ data: [datum], loss: trainingLoss });
        await lineage.optimizerStep();
        return output.logprobs[0] ?? [];
      };
      const firstAtBase = await train(first);
      const secondAtBase = await train(second);
      secondAtBase.forEach((value, index) => expect(value).toBeCloseTo(firstAtBase[index] ?? Number.NaN, 4));
      const firstOnce = await train(first);
      expect(mean(firstOnce)).toBeGreaterThan(mean(firstAtBase));
      // Trained once, as the first lineage was when it read `firstOnce`: the first one's second step is not in it.
      const secondOnce = await train(second);
      secondOnce.forEach((value, index) => expect(value).toBeCloseTo(firstOnce[index] ?? Number.NaN, 4));
      const firstTwice = await train(first);
      expect(mean(firstTwice)).toBeGreaterThan(mean(firstOnce));
      expect(() => engine.lineage?.('')).toThrow(/non-empty id/);
    });
  });
}
