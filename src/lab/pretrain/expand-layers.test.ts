import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTransformer } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { builtinShape, initialWeights, tinyTestArchitecture } from './builtin-model-shape.js';
import { expandLayers, expansionPlan } from './expand-layers.js';

const tokens = { endOfText: 380, imEnd: 382 };

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

describe('expandLayers', () => {
  it('spreads the new layers evenly, each after the layer it copies', () => {
    expect(expansionPlan(4, 6)).toEqual([
      { source: 0, added: false },
      { source: 1, added: false },
      { source: 1, added: true },
      { source: 2, added: false },
      { source: 3, added: false },
      { source: 3, added: true },
    ]);
    expect(expansionPlan(2, 2)).toEqual([{ source: 0, added: false }, { source: 1, added: false }]);
    expect(() => expansionPlan(4, 3)).toThrow(/4-layer model to 3 layers/);
  });

  it('gives a deeper model that computes what the smaller one did, and whose new layers can learn', async () => {
    const small = builtinShape(tinyTestArchitecture, tokens);
    const large = builtinShape({ ...tinyTestArchitecture, layerCount: 3 }, tokens);
    const weights = initialWeights(small, 3);
    const expanded = expandLayers(weights, 2, 3);
    expect(expanded.get('model.layers.2.self_attn.q_proj.weight')?.data).toEqual(weights.get('model.layers.1.self_attn.q_proj.weight')?.data);
    expect(expanded.get('model.layers.2.mlp.down_proj.weight')?.data.every((value) => value === 0)).toBe(true);
    expect(expanded.get('model.layers.1.mlp.down_proj.weight')?.data).toEqual(weights.get('model.layers.1.mlp.down_proj.weight')?.data);

    const request = { promptTokenIds: [5, 17, 40, 2, 99], continuationTokenIds: [7, 8, 120, 3] };
    const before = loadTransformer({ shape: small, weights, trainParams: 'full' });
    const after = loadTransformer({ shape: large, weights: expanded, trainParams: 'full' });
    try {
      const original = (await before.score(request)).logprobs;
      const grown = (await after.score(request)).logprobs;
      grown.forEach((value, index) => expect(value).toBeCloseTo(original[index] ?? Number.NaN, 5));
      // The zeroed output projection still gets a gradient, so the new block starts learning.
      await after.forwardBackward({
        sequences: [{ tokenIds: [...request.promptTokenIds, ...request.continuationTokenIds], targetStart: request.promptTokenIds.length }],
        loss: (logprobs) => tf.neg(tf.addN(logprobs.map((values) => tf.sum(values)))) as tf.Scalar,
      });
      const gradients = await after.gradients();
      const gradient = gradients.get('model.layers.2.self_attn.o_proj.weight')?.data ?? new Float32Array();
      expect(gradient.some((value) => value !== 0)).toBe(true);
    } finally {
      before.dispose();
      after.dispose();
    }
  });
});
