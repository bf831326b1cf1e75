import { describe, expect, it } from 'vitest';
import type { TrainingDatum } from '../../spec/training-engine.js';
import { wireDatumOf, wireLossConfigOf } from './tinker-api.js';
import { responseLogprobsOf, tinkerBatchOf } from './tinker-datums.js';

const datum: TrainingDatum = {
  promptTokenIds: [10, 11, 12],
  responseTokenIds: [20, 21],
  lossMask: [1, 0],
  advantages: [0.8, 0.5],
  rolloutLogprobs: [-0.31, -1.2],
  temperature: 1,
};

describe('Tinker datums', () => {
  it('aligns a datum next-token-wise: prompt positions advantage 0 and log-prob 0, response advantages A·m/N', () => {
    const batch = tinkerBatchOf([datum], { name: 'importance_sampling' }, 4, null);
    expect(batch.lossFunction).toBe('importance_sampling');
    expect(batch.clip).toBeNull();
    const [sequence] = batch.sequences;
    if (sequence === undefined) throw new Error('no sequence');
    expect(wireDatumOf(sequence.tokens, sequence.logprobs, sequence.advantages)).toEqual({
      model_input: { chunks: [{ type: 'encoded_text', tokens: [10, 11, 12, 20] }] },
      loss_fn_inputs: {
        target_tokens: { data: [11, 12, 20, 21], dtype: 'int64', shape: [4] },
        logprobs: { data: [0, 0, -0.31, -1.2], dtype: 'float32', shape: [4] },
        advantages: { data: [0, 0, 0.2, 0], dtype: 'float32', shape: [4] },
      },
    });
    expect(responseLogprobsOf(datum, [-1, -2, -3, -4])).toEqual([-3, -4]);
  });

  it("sends ppo's ε as Tinker's absolute ratio bounds, and decoupled_ppo as ppo against ℓ_old with the truncated importance weight", () => {
    expect(wireLossConfigOf(tinkerBatchOf([datum], { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 }, 1, null).clip)).toEqual({ clip_low_threshold: 0.8, clip_high_threshold: 1.28 });
    const current = [[-0.3, -1]];
    const decoupled = tinkerBatchOf([{ ...datum, rolloutLogprobs: [-5, -1.2] }], { name: 'decoupled_ppo', clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0 }, 1, current);
    expect(decoupled.lossFunction).toBe('ppo');
    expect(decoupled.sequences[0]?.logprobs).toEqual([0, 0, -0.3, -1]);
    // exp(−0.3 + 5) > 2: the weight is the cap.
    expect(decoupled.sequences[0]?.advantages).toEqual([0, 0, 1.6, 0]);
  });
});
