import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultPolicyLossOptions, policyLoss } from '../core/rl/policy-loss.js';
import { initializeTensorBackend } from '../tensor/index.js';
import { anchorNegativeEntropyOf, createPolicyGradientLoss } from './policy-gradient-loss.js';
import { loadTransformerFromFolder } from './transformer.js';
import type { TokenLoss, TrainingSequence } from './transformer-training.js';

const folder = join(import.meta.dirname, '__fixtures__', 'golden', 'qwen3');
const sequences = [
  { tokenIds: [3, 14, 15, 92, 65, 35, 89], targetStart: 3 },
  { tokenIds: [7, 21, 44, 5, 61], targetStart: 2 },
];
const inputs = [
  { rolloutLogprobs: [-4.1, -3.9, -5.5, -6], advantages: [1, 1, 1, 1], lossMask: [1, 1, 0, 1], referenceLogprobs: [-4.5, -4.6, -4.4, -4.5] },
  { rolloutLogprobs: [-2.5, -40, -4.7], advantages: [-0.5, 0.25, -1], lossMask: [1, 1, 1], referenceLogprobs: [-4.4, -4.3, -4.7] },
];

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

async function gradientsOf(loss: TokenLoss, trained: TrainingSequence[] = sequences) {
  const transformer = await loadTransformerFromFolder(folder, { trainParams: 'lora', lora: { rank: 2, alpha: 4, targetModules: ['q_proj', 'down_proj'] } });
  try {
    const result = await transformer.forwardBackward({ sequences: trained, loss, temperature: 0.7 });
    return { result, gradients: await transformer.gradients() };
  } finally {
    transformer.dispose();
  }
}

describe('createPolicyGradientLoss', () => {
  for (const klCoefficient of [0, 0.05]) {
    it(`matches the number reference in value and gives the gradient −Σ m·w·A·∇ℓ / N (β ${klCoefficient})`, async () => {
      const options = { ...defaultPolicyLossOptions, klCoefficient };
      const { result, gradients } = await gradientsOf(createPolicyGradientLoss(inputs, options));
      const reference = policyLoss(result.tokenLogprobs.map((logprobs, index) => ({ logprobs, ...inputs[index]! })), options);
      expect(result.loss).toBeCloseTo(reference.loss, 5);
      expect(reference.importanceRatio.truncatedFraction).toBeGreaterThan(0);

      // The same gradient from an explicit surrogate with the weights as constants.
      const weights = result.tokenLogprobs.map((logprobs, index) =>
        logprobs.map((logprob, position) => Math.min(Math.exp(logprob - inputs[index]!.rolloutLogprobs[position]!), options.importanceSamplingCap)),
      );
      const explicit = await gradientsOf((tokenLogprobs) => {
        const terms = tokenLogprobs.map((logprobs, index) => {
          const input = inputs[index]!;
          const coefficient = tf.tensor1d(input.lossMask.map((mask, position) => mask * weights[index]![position]! * input.advantages[position]!));
          let term = tf.neg(tf.sum(tf.mul(coefficient, logprobs)));
          if (klCoefficient > 0) {
            const difference = tf.sub(tf.tensor1d(input.referenceLogprobs), logprobs);
            term = tf.add(term, tf.mul(tf.sum(tf.mul(tf.tensor1d(input.lossMask), tf.sub(tf.sub(tf.exp(difference), difference), 1))), klCoefficient));
          }
          return term;
        });
        return tf.div(tf.addN(terms), reference.lossTokens) as tf.Scalar;
      });
      expect(gradients.size).toBeGreaterThan(0);
      for (const [name, gradient] of gradients) {
        const expected = explicit.gradients.get(name);
        expect(expected, name).toBeDefined();
        const largest = Math.max(...Array.from(expected!.data, Math.abs), 1e-12);
        gradient.data.forEach((value, index) => expect(Math.abs(value - expected!.data[index]!) / largest).toBeLessThan(1e-3));
      }
    });
  }
});

describe('createPolicyGradientLoss on a later pass (proximal log-probs)', () => {
  it('matches the number reference, and clipped tokens give no gradient', async () => {
    const options = defaultPolicyLossOptions;
    const first = await gradientsOf(createPolicyGradientLoss(inputs, options));
    // ℓ_old away from ℓ by up to ±0.6 nats: some ratios leave [0.8, 1.28] on the side their advantage pushes.
    const offsets = [[0.6, -0.6, 0.1, -0.05], [0.6, -0.6, 0.3]];
    const proximal = first.result.tokenLogprobs.map((logprobs, index) => logprobs.map((logprob, position) => logprob + offsets[index]![position]!));
    const later = inputs.map((input, index) => ({ ...input, proximalLogprobs: proximal[index]! }));
    const { result, gradients } = await gradientsOf(createPolicyGradientLoss(later, options));
    const reference = policyLoss(result.tokenLogprobs.map((logprobs, index) => ({ logprobs, ...later[index]! })), options);
    expect(result.loss).toBeCloseTo(reference.loss, 5);
    expect(reference.clipFraction).toBeGreaterThan(0);
    expect(reference.clipFraction).toBeLessThan(1);

    // −Σ m·w·ρ·A·∇ℓ / N over the unclipped tokens, w and ρ as constants taken against ℓ_old.
    const coefficients = result.tokenLogprobs.map((logprobs, index) =>
      logprobs.map((logprob, position) => {
        const input = later[index]!;
        const advantage = input.advantages[position]!;
        const ratio = Math.exp(logprob - input.proximalLogprobs[position]!);
        const clipped = (advantage > 0 && ratio > 1 + options.clipHigh) || (advantage < 0 && ratio < 1 - options.clipLow);
        const weight = Math.min(Math.exp(input.proximalLogprobs[position]! - input.rolloutLogprobs[position]!), options.importanceSamplingCap);
        return clipped ? 0 : input.lossMask[position]! * weight * ratio * advantage;
      }),
    );
    expect(coefficients.flat().filter((coefficient) => coefficient === 0).length).toBeGreaterThan(1);
    const explicit = await gradientsOf((tokenLogprobs) => {
      const terms = tokenLogprobs.map((logprobs, index) => tf.neg(tf.sum(tf.mul(tf.tensor1d(coefficients[index]!), logprobs))));
      return tf.div(tf.addN(terms), reference.lossTokens) as tf.Scalar;
    });
    for (const [name, gradient] of gradients) {
      const expected = explicit.gradients.get(name)!;
      const largest = Math.max(...Array.from(expected.data, Math.abs), 1e-12);
      gradient.data.forEach((value, index) => expect(Math.abs(value - expected.data[index]!) / largest).toBeLessThan(1e-3));
    }
  });

  it('refuses proximal log-probs that do not line up with the response', async () => {
    const misaligned = inputs.map((input) => ({ ...input, proximalLogprobs: [-1] }));
    await expect(gradientsOf(createPolicyGradientLoss(misaligned, defaultPolicyLossOptions))).rejects.toThrow(/proximalLogprobs need one entry per response token/);
  });
});

describe('createPolicyGradientLoss with an OPD support set', () => {
  const supportTokenIds = [
    // 92 and 61 are the targets at those positions (the sampled tokens themselves).
    [[92, 9], [], [17], [2, 3, 4]],
    [[8], [1, 6], [61]],
  ];
  const supportAdvantages = [
    [[0.5, -0.25], [], [1], [0.1, -0.2, 0.3]],
    [[-1], [0.4, 0.2], [0.3]],
  ];
  const withSupport = inputs.map((input, index) => ({
    ...input,
    support: supportAdvantages[index]!.map((advantages) => ({ advantages })),
  }));
  const supported = sequences.map((sequence, index) => ({ ...sequence, supportTokenIds: supportTokenIds[index]! }));

  const supportGradientsOf = (loss: TokenLoss) => gradientsOf(loss, supported);

  it('matches the number reference and adds −Σ m·A_v·∇ℓ_v / N over the set to the sampled tokens\' gradient', async () => {
    const options = defaultPolicyLossOptions;
    const { result, gradients } = await supportGradientsOf(createPolicyGradientLoss(withSupport, options));
    expect(result.supportLogprobs.map((rows) => rows?.map((row) => row.length))).toEqual([
      [2, 0, 1, 3],
      [1, 2, 1],
    ]);
    // A support token's log-prob is the log-prob the model gives it at that position.
    const sampled = await supportGradientsOf(createPolicyGradientLoss(inputs, options));
    expect(result.supportLogprobs[0]![0]![0]).toBeCloseTo(result.tokenLogprobs[0]![0]!, 5);
    expect(result.supportLogprobs[1]![2]![0]).toBeCloseTo(result.tokenLogprobs[1]![2]!, 5);
    expect(result.supportLogprobs[0]![0]![1]).not.toBeCloseTo(result.tokenLogprobs[0]![0]!, 3);
    expect(sampled.result.tokenLogprobs).toEqual(result.tokenLogprobs);
    const reference = policyLoss(
      result.tokenLogprobs.map((logprobs, index) => ({
        logprobs,
        ...inputs[index]!,
        support: supportAdvantages[index]!.map((advantages, position) => ({ advantages, logprobs: result.supportLogprobs[index]![position]! })),
      })),
      options,
    );
    expect(result.loss).toBeCloseTo(reference.loss, 5);
    expect(reference.loss).not.toBeCloseTo(policyLoss(result.tokenLogprobs.map((logprobs, index) => ({ logprobs, ...inputs[index]! })), options).loss, 3);

    const weights = result.tokenLogprobs.map((logprobs, index) =>
      logprobs.map((logprob, position) => Math.min(Math.exp(logprob - inputs[index]!.rolloutLogprobs[position]!), options.importanceSamplingCap)),
    );
    const explicit = await supportGradientsOf((tokenLogprobs, supportLogprobs) => {
      const terms = tokenLogprobs.map((logprobs, index) => {
        const input = inputs[index]!;
        const coefficient = tf.tensor1d(input.lossMask.map((mask, position) => mask * weights[index]![position]! * input.advantages[position]!));
        const width = supportLogprobs[index]!.shape[1];
        const supportCoefficient = tf.tensor2d(
          supportAdvantages[index]!.flatMap((advantages, position) => Array.from({ length: width }, (_, column) => input.lossMask[position]! * (advantages[column] ?? 0))),
          [input.lossMask.length, width],
        );
        return tf.neg(tf.add(tf.sum(tf.mul(coefficient, logprobs)), tf.sum(tf.mul(supportCoefficient, supportLogprobs[index]!))));
      });
      return tf.div(tf.addN(terms), reference.lossTokens) as tf.Scalar;
    });
    expect(gradients.size).toBeGreaterThan(0);
    let largestChange = 0;
    for (const [name, gradient] of gradients) {
      const expected = explicit.gradients.get(name)!;
      const largest = Math.max(...Array.from(expected.data, Math.abs), 1e-12);
      gradient.data.forEach((value, index) => expect(Math.abs(value - expected.data[index]!) / largest).toBeLessThan(1e-3));
      const withoutSupport = sampled.gradients.get(name)!;
      largestChange = Math.max(largestChange, ...Array.from(gradient.data, (value, index) => Math.abs(value - withoutSupport.data[index]!) / largest));
    }
    // The set moves the weights: the gradient is not the sampled tokens' alone.
    expect(largestChange).toBeGreaterThan(1e-2);
  });

  it('takes the support tokens\' ratios against their proximal log-probs on a later pass', async () => {
    const options = defaultPolicyLossOptions;
    const first = await supportGradientsOf(createPolicyGradientLoss(withSupport, options));
    const proximalOf = (index: number, position: number) => first.result.supportLogprobs[index]![position]!.map((value, column) => value + (column % 2 === 0 ? 0.5 : -0.5));
    const later = withSupport.map((input, index) => ({
      ...input,
      proximalLogprobs: first.result.tokenLogprobs[index]!,
      support: input.support.map((target, position) => ({ ...target, proximalLogprobs: proximalOf(index, position) })),
    }));
    const { result } = await supportGradientsOf(createPolicyGradientLoss(later, options));
    const reference = policyLoss(
      result.tokenLogprobs.map((logprobs, index) => ({
        logprobs,
        ...inputs[index]!,
        proximalLogprobs: later[index]!.proximalLogprobs,
        support: later[index]!.support.map((target, position) => ({ ...target, logprobs: result.supportLogprobs[index]![position]! })),
      })),
      options,
    );
    expect(result.loss).toBeCloseTo(reference.loss, 5);
    expect(result.loss).not.toBeCloseTo(first.result.loss, 3);
  });

  it('refuses support tokens that do not line up with the targets', async () => {
    const transformer = await loadTransformerFromFolder(folder, { trainParams: 'lora', lora: { rank: 2, alpha: 4, targetModules: ['q_proj'] } });
    try {
      await expect(
        transformer.forwardBackward({ sequences: [{ ...sequences[0]!, supportTokenIds: [[1]] }], loss: (values) => tf.sum(values[0]!) as tf.Scalar }),
      ).rejects.toThrow(/supportTokenIds has 1 positions for 4 targets/);
    } finally {
      transformer.dispose();
    }
  });
});

describe('createPolicyGradientLoss with the anchor', () => {
  // A reference distribution over three tokens at each response position (weights sum below 1, as top-K do).
  const anchorTokenIds = [
    [[92, 9, 4], [1, 2, 3], [17, 5, 6], [2, 3, 4]],
    [[8, 9, 10], [1, 6, 7], [61, 3, 2]],
  ];
  const anchorWeights = [
    [[0.5, 0.3, 0.1], [0.6, 0.2, 0.1], [0.3, 0.3, 0.3], [0.9, 0.05, 0.01]],
    [[0.4, 0.4, 0.1], [0.7, 0.1, 0.1], [0.5, 0.2, 0.2]],
  ];
  const negativeEntropy = anchorWeights.map((positions) => positions.map(anchorNegativeEntropyOf));
  const anchored = sequences.map((sequence, index) => ({ ...sequence, anchor: { tokenIds: anchorTokenIds[index]!, weights: anchorWeights[index]! } }));
  const withAnchor = inputs.map((input, index) => ({ ...input, anchorNegativeEntropy: negativeEntropy[index]! }));
  const anchorCoefficient = 0.7;

  it('matches the number reference (an_t = KL(q ‖ π) over the listed tokens and the rest) and adds −α·∇ of the anchor log-likelihood / N', async () => {
    const options = { ...defaultPolicyLossOptions, anchorCoefficient };
    const { result, gradients } = await gradientsOf(createPolicyGradientLoss(withAnchor, options), anchored);
    const anchorKl = result.anchorLogprobs.map((values, index) => values!.map((value, position) => negativeEntropy[index]![position]! - value));
    anchorKl.flat().forEach((value) => expect(value).toBeGreaterThan(0));
    const reference = policyLoss(result.tokenLogprobs.map((logprobs, index) => ({ logprobs, ...inputs[index]!, anchorKl: anchorKl[index]! })), options);
    expect(reference.anchorKl).toBeGreaterThan(0);
    expect(result.loss).toBeCloseTo(reference.loss, 5);
    expect(reference.loss).not.toBeCloseTo(policyLoss(result.tokenLogprobs.map((logprobs, index) => ({ logprobs, ...inputs[index]! })), defaultPolicyLossOptions).loss, 3);

    const { result: unanchored } = await gradientsOf(createPolicyGradientLoss(inputs, defaultPolicyLossOptions), sequences);
    const weights = unanchored.tokenLogprobs.map((logprobs, index) =>
      logprobs.map((logprob, position) => Math.min(Math.exp(logprob - inputs[index]!.rolloutLogprobs[position]!), options.importanceSamplingCap)),
    );
    const explicit = await gradientsOf((tokenLogprobs, _support, anchorLogprobs) => {
      const terms = tokenLogprobs.map((logprobs, index) => {
        const input = inputs[index]!;
        const coefficient = tf.tensor1d(input.lossMask.map((mask, position) => mask * weights[index]![position]! * input.advantages[position]!));
        const anchorTerm = tf.mul(tf.sum(tf.mul(tf.tensor1d(input.lossMask), anchorLogprobs[index]!)), -anchorCoefficient);
        return tf.add(tf.neg(tf.sum(tf.mul(coefficient, logprobs))), anchorTerm);
      });
      return tf.div(tf.addN(terms), reference.lossTokens) as tf.Scalar;
    }, anchored);
    for (const [name, gradient] of gradients) {
      const expected = explicit.gradients.get(name)!;
      const largest = Math.max(...Array.from(expected.data, Math.abs), 1e-12);
      gradient.data.forEach((value, index) => expect(Math.abs(value - expected.data[index]!) / largest).toBeLessThan(1e-3));
    }
  });

  it('refuses an anchor whose positions do not line up, or a loss with α > 0 and no anchor', async () => {
    const short = [{ ...anchored[0]!, anchor: { tokenIds: anchorTokenIds[0]!.slice(1), weights: anchorWeights[0]!.slice(1) } }];
    await expect(gradientsOf(createPolicyGradientLoss([withAnchor[0]!], { ...defaultPolicyLossOptions, anchorCoefficient }), short)).rejects.toThrow(/anchor has 3 positions for 4 targets/);
    const ragged = [{ ...anchored[0]!, anchor: { tokenIds: [[1, 2], ...anchorTokenIds[0]!.slice(1)], weights: anchorWeights[0]! } }];
    await expect(gradientsOf(createPolicyGradientLoss([withAnchor[0]!], { ...defaultPolicyLossOptions, anchorCoefficient }), ragged)).rejects.toThrow(/same number of tokens/);
    await expect(gradientsOf(createPolicyGradientLoss([withAnchor[0]!], { ...defaultPolicyLossOptions, anchorCoefficient }), [sequences[0]!])).rejects.toThrow(/anchor/);
  });
});
