import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { initializeTensorBackend } from '../tensor/index.js';
import { readSafetensors } from './safetensors.js';
import { loadTransformer, loadTransformerFromFolder } from './transformer.js';
import type { Transformer } from './transformer.js';
import { ropeInverseFrequencies } from './transformer-forward.js';
import { transformerShapeFromHuggingFaceConfig } from './transformer-shape.js';

const fixtures = join(import.meta.dirname, '__fixtures__', 'golden');
const tokenIds = [3, 14, 15, 92, 65, 35, 89, 79, 32, 38];
const promptLength = 4;

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

async function scoreOf(transformer: Transformer): Promise<number[]> {
  const result = await transformer.score({ promptTokenIds: tokenIds.slice(0, promptLength), continuationTokenIds: tokenIds.slice(promptLength) });
  return result.logprobs;
}

function expectClose(actual: number[], expected: number[], tolerance = 1e-5): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, index) => expect(Math.abs(value - (expected[index] ?? Number.NaN))).toBeLessThan(tolerance));
}

const sumLoss = (tokenLogprobs: tf.Tensor1D[]): tf.Scalar => tf.neg(tf.addN(tokenLogprobs.map((values) => tf.sum(values)))) as tf.Scalar;

describe('LoRA adapters', () => {
  it('exports PEFT files that import back to the same model', async () => {
    const source = await loadTransformerFromFolder(join(fixtures, 'qwen3'), {
      trainParams: 'lora',
      lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] },
    });
    const target = await loadTransformerFromFolder(join(fixtures, 'qwen3'), { trainParams: 'lora' });
    try {
      const optimizer = source.createOptimizer({ learningRate: 0.05 });
      await source.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }], loss: sumLoss });
      optimizer.step();
      const files = await source.exportAdapter({ baseModelNameOrPath: 'Qwen/Qwen3-tiny' });
      const config = JSON.parse(new TextDecoder().decode(files['adapter_config.json'])) as Record<string, unknown>;
      expect(config).toMatchObject({
        peft_type: 'LORA',
        task_type: 'CAUSAL_LM',
        base_model_name_or_path: 'Qwen/Qwen3-tiny',
        r: 4,
        lora_alpha: 8,
        target_modules: ['q_proj', 'v_proj', 'down_proj'],
        bias: 'none',
        use_rslora: false,
        modules_to_save: null,
      });
      const tensors = readSafetensors(files['adapter_model.safetensors'] ?? new Uint8Array()).tensors;
      expect(tensors.get('base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight')?.shape).toEqual([4, 32]);
      expect(tensors.get('base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight')?.shape).toEqual([64, 4]);
      expect(tensors.get('base_model.model.model.layers.0.mlp.down_proj.lora_A.weight')?.shape).toEqual([4, 64]);
      expect(tensors.size).toBe(2 * 2 * 3);

      const trained = await scoreOf(source);
      const before = await scoreOf(target);
      target.importAdapter(files);
      const imported = await scoreOf(target);
      expectClose(imported, trained);
      expect(imported).not.toEqual(before);
      expect(() => target.importAdapter({ 'adapter_config.json': new TextEncoder().encode('{"peft_type":"LORA"}') })).toThrow(ClawrlError);
    } finally {
      source.dispose();
      target.dispose();
    }
  });

  it('exports merged full weights in HF names that load as the adapted model', async () => {
    const adapted = await loadTransformerFromFolder(join(fixtures, 'llama'), { trainParams: 'lora' });
    try {
      const folder = join(fixtures, 'llama', 'adapter');
      adapted.importAdapter({
        'adapter_config.json': await readFile(join(folder, 'adapter_config.json')),
        'adapter_model.safetensors': await readFile(join(folder, 'adapter_model.safetensors')),
      });
      const bytes = await adapted.exportFullWeights();
      const weights = readSafetensors(bytes).tensors;
      expect(weights.get('model.layers.0.self_attn.q_proj.weight')?.shape).toEqual([32, 32]);
      expect(weights.get('lm_head.weight')?.shape).toEqual([96, 32]);
      const merged = loadTransformer({ shape: adapted.shape, weights, trainParams: 'full' });
      try {
        expectClose(await scoreOf(merged), await scoreOf(adapted), 1e-4);
      } finally {
        merged.dispose();
      }
    } finally {
      adapted.dispose();
    }
  });
});

describe('training', () => {
  it.each(['lora', 'full'] as const)('raises the target log-probs with AdamW (%s)', async (trainParams) => {
    const transformer = await loadTransformerFromFolder(join(fixtures, 'qwen2'), { trainParams, lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] } });
    try {
      const optimizer = transformer.createOptimizer({ learningRate: 0.01, weightDecay: 0.01, maxGradientNorm: 10 });
      const losses: number[] = [];
      for (let step = 0; step < 6; step += 1) {
        const result = await transformer.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }], loss: sumLoss });
        losses.push(result.loss);
        const { gradientNorm } = optimizer.step();
        expect(gradientNorm).toBeGreaterThan(0);
      }
      expect(losses[5] ?? Infinity).toBeLessThan((losses[0] ?? 0) - 1);
      optimizer.dispose();
    } finally {
      transformer.dispose();
    }
  });

  it('accumulates gradients across calls like one call over the whole batch', async () => {
    const transformer = await loadTransformerFromFolder(join(fixtures, 'qwen3'), { trainParams: 'lora', loraSeed: 3 });
    try {
      const other = [7, 7, 1, 2, 3, 60, 61, 62];
      // B starts at zero, so nudge it first: otherwise every A gradient is zero.
      const optimizer = transformer.createOptimizer({ learningRate: 0.01 });
      await transformer.forwardBackward({ sequences: [{ tokenIds }], loss: sumLoss });
      optimizer.step();
      await transformer.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }, { tokenIds: other, targetStart: 2 }], loss: sumLoss });
      const together = await transformer.gradients();
      transformer.clearGradients();
      await transformer.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }], loss: sumLoss });
      await transformer.forwardBackward({ sequences: [{ tokenIds: other, targetStart: 2 }], loss: sumLoss });
      const split = await transformer.gradients();
      for (const [name, gradient] of together) {
        const parts = split.get(name)?.data ?? new Float32Array();
        const worst = Math.max(...Array.from(gradient.data, (value, index) => Math.abs(value - (parts[index] ?? Number.NaN))));
        expect(worst, name).toBeLessThan(1e-5);
      }
      expect(Math.max(...Array.from(together.values(), (gradient) => Math.max(...Array.from(gradient.data, Math.abs))))).toBeGreaterThan(0);
    } finally {
      transformer.dispose();
    }
  });

  it('steps on set gradients (a data-parallel sum) exactly as on its own accumulated ones', async () => {
    const load = () => loadTransformerFromFolder(join(fixtures, 'qwen2'), { trainParams: 'full' });
    const [whole, first, second] = await Promise.all([load(), load(), load()]);
    const other = [7, 7, 1, 2, 3, 60, 61, 62];
    try {
      await whole.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }, { tokenIds: other, targetStart: 2 }], loss: sumLoss });
      whole.createOptimizer({ learningRate: 0.01 }).step();
      await first.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }], loss: sumLoss });
      await second.forwardBackward({ sequences: [{ tokenIds: other, targetStart: 2 }], loss: sumLoss });
      const sum = await first.gradients();
      for (const [name, gradient] of await second.gradients()) {
        const target = sum.get(name)?.data ?? new Float32Array();
        gradient.data.forEach((value, index) => (target[index] = (target[index] ?? 0) + value));
      }
      first.setGradients(sum);
      first.createOptimizer({ learningRate: 0.01 }).step();
      const expected = readSafetensors(await whole.exportFullWeights()).tensors;
      for (const [name, tensor] of readSafetensors(await first.exportFullWeights()).tensors) {
        const reference = expected.get(name)?.data ?? new Float32Array();
        const worst = Math.max(...Array.from(tensor.data, (value, index) => Math.abs(value - (reference[index] ?? Number.NaN))));
        expect(worst, name).toBeLessThan(1e-5);
      }
      const [name, gradient] = [...sum][0] ?? ['', { shape: [1], data: new Float32Array(1) }];
      expect(() => first.setGradients(new Map([[name, { shape: [...gradient.shape, 1], data: gradient.data }]]))).toThrow(ClawrlError);
    } finally {
      for (const transformer of [whole, first, second]) transformer.dispose();
    }
  });

  it('rejects sequences without targets and non-scalar losses', async () => {
    const transformer = await loadTransformerFromFolder(join(fixtures, 'qwen3'), { trainParams: 'lora' });
    try {
      await expect(transformer.forwardBackward({ sequences: [{ tokenIds: [1, 2, 3], targetStart: 3 }], loss: sumLoss })).rejects.toThrow(ClawrlError);
      await expect(
        transformer.forwardBackward({ sequences: [{ tokenIds: [1, 2, 3] }], loss: (values) => values[0] as unknown as tf.Scalar }),
      ).rejects.toThrow(/scalar/);
    } finally {
      transformer.dispose();
    }
  });
});

describe('ropeInverseFrequencies', () => {
  it('divides every frequency by the factor under linear scaling', async () => {
    const shape = transformerShapeFromHuggingFaceConfig(JSON.parse(await readFile(join(fixtures, 'qwen2', 'config.json'), 'utf8')));
    const plain = ropeInverseFrequencies(shape);
    const scaled = ropeInverseFrequencies({ ...shape, ropeScaling: { type: 'linear', factor: 4 } });
    expect(plain[0]).toBe(1);
    plain.forEach((frequency, index) => expect(scaled[index]).toBeCloseTo(frequency / 4, 12));
  });
});

describe('transformerShapeFromHuggingFaceConfig', () => {
  it('maps family flags and reads transformers 5 rope_parameters', async () => {
    const qwen3 = JSON.parse(await readFile(join(fixtures, 'qwen3', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(transformerShapeFromHuggingFaceConfig(qwen3)).toMatchObject({ family: 'qwen3', headDim: 16, qkNorm: true, qkvBias: false, tieWordEmbeddings: true });
    const qwen2 = JSON.parse(await readFile(join(fixtures, 'qwen2', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(transformerShapeFromHuggingFaceConfig(qwen2)).toMatchObject({ family: 'qwen2', headDim: 8, qkvBias: true, outputBias: false, ropeTheta: 1e6 });
    const modern = { ...qwen2, rope_theta: undefined, rope_parameters: { rope_type: 'default', rope_theta: 5e5 } };
    expect(transformerShapeFromHuggingFaceConfig(modern).ropeTheta).toBe(5e5);
    expect(() => transformerShapeFromHuggingFaceConfig({ ...qwen2, model_type: 'gpt2' })).toThrow(ClawrlError);
    expect(() => transformerShapeFromHuggingFaceConfig({ ...qwen2, num_key_value_heads: 3 })).toThrow(ClawrlError);
  });
});
