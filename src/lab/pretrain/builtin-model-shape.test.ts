import { describe, expect, it } from 'vitest';
import { parameterCount } from '../../model/transformer-shape.js';
import { builtinArchitecture, builtinConfigJson, builtinShape, initialWeights, tinyTestArchitecture } from './builtin-model-shape.js';

describe('builtin model shape', () => {
  const tokens = { endOfText: 1531, imEnd: 1533 };
  it('is a tied Llama of about 3.7M parameters whose config the model code reads back', () => {
    const shape = builtinShape(builtinArchitecture, tokens);
    expect(shape).toMatchObject({ family: 'llama', tieWordEmbeddings: true, headDim: 64, maxPositionEmbeddings: 1024, vocabSize: 1536 });
    expect(parameterCount(shape)).toBeGreaterThan(3.5e6);
    expect(parameterCount(shape)).toBeLessThan(4.5e6);
    expect(builtinConfigJson(builtinArchitecture, tokens)).toMatchObject({ eos_token_id: 1533, model_type: 'llama' });
  });

  it('initializes deterministically: unit norms, small weights, scaled residual projections', () => {
    const shape = builtinShape(tinyTestArchitecture, tokens);
    const first = initialWeights(shape, 5);
    const second = initialWeights(shape, 5);
    expect(first.get('model.layers.0.mlp.up_proj.weight')?.data).toEqual(second.get('model.layers.0.mlp.up_proj.weight')?.data);
    expect(Array.from(first.get('model.norm.weight')?.data ?? [])).toEqual(new Array<number>(32).fill(1));
    const deviation = (name: string): number => {
      const data = first.get(name)?.data ?? new Float32Array();
      return Math.sqrt(data.reduce((sum, value) => sum + value * value, 0) / data.length);
    };
    expect(deviation('model.embed_tokens.weight')).toBeCloseTo(0.02, 2);
    expect(deviation('model.layers.1.self_attn.o_proj.weight')).toBeCloseTo(0.01, 2);
  });
});
