import { describe, expect, it } from 'vitest';
import { runTrainingEngineContract } from '../training-engine.contract.js';
import { createFakeTrainingEngine } from './fake-training-engine.js';

// The fake stands for the real engines in the trainer's tests, so it must keep the same promises.
for (const trainParams of ['lora', 'full'] as const) {
  runTrainingEngineContract({
    name: `fake bigram engine (${trainParams})`,
    createEngine: async () => createFakeTrainingEngine({ trainParams }),
    promptTokenIds: [3, 14, 15, 92, 65],
    responseTokenIds: [35, 89, 79, 32],
  });
}
// A remote-like engine: Tinker's losses only, none of clawrl's terms, and temperature 1 only.
runTrainingEngineContract({
  name: 'fake bigram engine (Tinker-like capabilities)',
  createEngine: async () =>
    createFakeTrainingEngine({ capabilities: { losses: ['ppo', 'importance_sampling'], referenceLogprobs: false, anchor: false, supportSets: false, proximalLogprobs: false, anyTemperature: false } }),
  promptTokenIds: [3, 14, 15, 92, 65],
  responseTokenIds: [35, 89, 79, 32],
});

describe('createFakeTrainingEngine', () => {
  const datum = { promptTokenIds: [1, 2], responseTokenIds: [3, 4, 3], lossMask: [1, 1, 1], advantages: [0.5, -1, 2], rolloutLogprobs: [-5, -5, -5], temperature: 0.7 };

  it('computes the same log-probs for the same inputs and seed, and other ones for another seed', async () => {
    const first = await createFakeTrainingEngine().forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    const again = await createFakeTrainingEngine().forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    const other = await createFakeTrainingEngine({ seed: 2 }).forwardBackward({ data: [datum], loss: { name: 'importance_sampling' } });
    expect(again.logprobs).toEqual(first.logprobs);
    expect(other.logprobs).not.toEqual(first.logprobs);
    // The token before picks the row: token 3 after 2 (position 0) and after 4 (position 2) differ.
    expect(first.logprobs[0]?.[0]).not.toBe(first.logprobs[0]?.[2]);
  });

  it('has exact gradients: their norm and their signs agree with finite differences of its loss, for every term', async () => {
    const vocabularySize = 16;
    const support = [{ tokenIds: [7, 8], advantages: [1, -0.5] }, { tokenIds: [], advantages: [] }, { tokenIds: [9], advantages: [0.25] }];
    const losses = [
      { name: 'decoupled_ppo', clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0.3, anchorCoefficient: 0.5, anchorTopK: 4 },
      { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 },
      { name: 'importance_sampling' },
    ] as const;
    for (const loss of losses) {
      const engine = createFakeTrainingEngine({ vocabularySize, trainParams: 'full' });
      // Off the base first, so the KL and the anchor have gradients.
      await engine.forwardBackward({ data: [{ ...datum, rolloutLogprobs: [-1, -1, -1] }], loss: { name: 'importance_sampling' } });
      await engine.optimizerStep({ learningRate: 0.3 });
      // ℓ_old is a constant of the loss, so it is given: otherwise it is ℓ itself, held still, which no finite difference sees.
      const current = await engine.forwardBackward({ data: [{ ...datum, support }], loss: { name: 'importance_sampling' } });
      await engine.optimizerStep({ learningRate: 0 });
      const shifted = (values: number[], index: number) => values.map((value, entry) => value + [0.1, -0.15, 0.3][(index + entry) % 3]!);
      const probe = {
        ...datum,
        ...(loss.name === 'decoupled_ppo' ? { proximalLogprobs: shifted(current.logprobs[0] ?? [], 0) } : {}),
        support: support.map((target, position) => ({ ...target, proximalLogprobs: shifted(current.supportLogprobs?.[0]?.[position] ?? [], position) })),
      };
      const start = await engine.publishWeights(1);
      const weightsOf = (artifact: typeof start) => new Float64Array((artifact.files['fake-weights.f64'] as Uint8Array).slice().buffer);
      const lossAt = async (weights: Float64Array) => {
        await engine.resetWeights({ version: 1, kind: 'full', files: { 'fake-weights.f64': new Uint8Array(weights.slice().buffer) } });
        const { loss: value } = await engine.forwardBackward({ data: [probe], loss });
        await engine.optimizerStep({ learningRate: 0 });
        return value;
      };
      const weights = weightsOf(start);
      const step = 1e-6;
      const numeric: number[] = [];
      for (let index = 0; index < weights.length; index += 1) {
        const up = weights.slice();
        const down = weights.slice();
        up[index] = (up[index] as number) + step;
        down[index] = (down[index] as number) - step;
        numeric.push(((await lossAt(up)) - (await lossAt(down))) / (2 * step));
      }
      // From fresh moments, Adam's first step moves each weight by its learning rate against the sign of its gradient.
      await engine.resetWeights(start);
      await engine.forwardBackward({ data: [probe], loss });
      const { gradientNorm } = await engine.optimizerStep({ learningRate: 1e-3 });
      const moved = weightsOf(await engine.publishWeights(2));
      expect(gradientNorm, loss.name).toBeCloseTo(Math.hypot(...numeric), 5);
      numeric.forEach((gradient, index) => {
        if (Math.abs(gradient) > 1e-6) expect(Math.sign((weights[index] as number) - (moved[index] as number)), `${loss.name} weight ${index}`).toBe(Math.sign(gradient));
      });
    }
  });

  it('records the calls it answers', async () => {
    const engine = createFakeTrainingEngine();
    const input = { data: [datum], loss: { name: 'importance_sampling' } as const };
    await engine.forwardBackward(input);
    await engine.optimizerStep({ learningRate: 0.1 });
    await engine.publishWeights(3);
    expect(engine.forwardBackwardCalls).toEqual([input]);
    expect(engine.optimizerStepCalls).toEqual([{ learningRate: 0.1 }]);
    expect(engine.publishedVersions).toEqual([3]);
  });
});
