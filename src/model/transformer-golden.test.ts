/**
 * Golden tests against PyTorch (scripts/golden/make-golden-fixtures.py, float64 reference):
 * per-token log-probs, LoRA gradients and full-parameter gradients of tiny Llama, Qwen2 and
 * Qwen3 models, plus bf16 and sharded checkpoints, on the wasm backend.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { initializeTensorBackend } from '../tensor/index.js';
import { readSafetensors } from './safetensors.js';
import type { FloatTensorData } from './safetensors.js';
import { loadTransformerFromFolder } from './transformer.js';
import type { Transformer } from './transformer.js';

const fixtures = join(import.meta.dirname, '__fixtures__', 'golden');

const goldenSchema = z.object({
  family: z.string(),
  tokenIds: z.array(z.number()),
  responseStart: z.number(),
  logprobs: z.array(z.number()),
  temperature: z.number(),
  temperatureLogprobs: z.array(z.number()),
  advantages: z.array(z.number()),
  lora: z.object({ rank: z.number(), alpha: z.number(), logprobs: z.array(z.number()), loss: z.number() }),
  fullLoss: z.number(),
});

type Golden = z.infer<typeof goldenSchema>;

async function readGolden(name: string): Promise<Golden> {
  return goldenSchema.parse(JSON.parse(await readFile(join(fixtures, name, 'golden.json'), 'utf8')));
}

async function adapterFiles(name: string): Promise<Record<string, Uint8Array>> {
  const folder = join(fixtures, name, 'adapter');
  return {
    'adapter_config.json': await readFile(join(folder, 'adapter_config.json')),
    'adapter_model.safetensors': await readFile(join(folder, 'adapter_model.safetensors')),
  };
}

function maxAbsDifference(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let index = 0; index < expected.length; index += 1) {
    worst = Math.max(worst, Math.abs((actual[index] ?? Number.NaN) - (expected[index] ?? 0)));
  }
  return worst;
}

function expectGradientsClose(actual: Map<string, FloatTensorData>, expected: Map<string, FloatTensorData>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [name, reference] of expected) {
    const computed = actual.get(name);
    expect(computed?.shape, name).toEqual(reference.shape);
    const scale = Math.max(1, ...Array.from(reference.data, Math.abs));
    expect(maxAbsDifference(computed?.data ?? [], reference.data) / scale, name).toBeLessThan(1e-4);
  }
}

function advantageLoss(golden: Golden) {
  return (tokenLogprobs: tf.Tensor1D[]): tf.Scalar => {
    const first = tokenLogprobs[0];
    if (first === undefined) throw new Error('no sequence');
    return tf.neg(tf.sum(tf.mul(first, tf.tensor1d(golden.advantages)))) as tf.Scalar;
  };
}

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

describe.each(['llama', 'qwen2', 'qwen3', 'llama-bf16', 'qwen2-sharded'])('golden %s', (name) => {
  it('matches PyTorch log-probs, LoRA gradients and full gradients', async () => {
    const golden = await readGolden(name);
    const folder = join(fixtures, name);
    const prompt = golden.tokenIds.slice(0, 1);
    const continuation = golden.tokenIds.slice(1);

    const lora: Transformer = await loadTransformerFromFolder(folder, {
      trainParams: 'lora',
      lora: { rank: 2, alpha: 4, targetModules: ['q_proj'] },
    });
    try {
      // A fresh adapter has B = 0, so this is the base model.
      const base = await lora.score({ promptTokenIds: prompt, continuationTokenIds: continuation });
      expect(maxAbsDifference(base.logprobs, golden.logprobs)).toBeLessThan(1e-4);
      const tempered = await lora.score({ promptTokenIds: prompt, continuationTokenIds: continuation, temperature: golden.temperature });
      expect(maxAbsDifference(tempered.logprobs, golden.temperatureLogprobs)).toBeLessThan(1e-4);

      lora.importAdapter(await adapterFiles(name));
      const adapted = await lora.score({ promptTokenIds: prompt, continuationTokenIds: continuation });
      expect(maxAbsDifference(adapted.logprobs, golden.lora.logprobs)).toBeLessThan(1e-4);

      const result = await lora.forwardBackward({
        sequences: [{ tokenIds: golden.tokenIds, targetStart: golden.responseStart }],
        loss: advantageLoss(golden),
      });
      expect(result.loss).toBeCloseTo(golden.lora.loss, 4);
      expect(maxAbsDifference(result.tokenLogprobs[0] ?? [], golden.lora.logprobs.slice(golden.responseStart - 1))).toBeLessThan(1e-4);
      const expected = readSafetensors(await readFile(join(folder, 'lora-gradients.safetensors'))).tensors;
      expectGradientsClose(await lora.gradients(), expected);
    } finally {
      lora.dispose();
    }

    const full = await loadTransformerFromFolder(folder, { trainParams: 'full' });
    try {
      const result = await full.forwardBackward({
        sequences: [{ tokenIds: golden.tokenIds, targetStart: golden.responseStart }],
        loss: advantageLoss(golden),
      });
      expect(result.loss).toBeCloseTo(golden.fullLoss, 4);
      const expected = readSafetensors(await readFile(join(folder, 'full-gradients.safetensors'))).tensors;
      expectGradientsClose(await full.gradients(), expected);
    } finally {
      full.dispose();
    }
  });
});

describe('activation recomputation', () => {
  it('gives the same gradients as keeping activations', async () => {
    const golden = await readGolden('qwen3');
    const transformer = await loadTransformerFromFolder(join(fixtures, 'qwen3'), { trainParams: 'lora' });
    try {
      transformer.importAdapter(await adapterFiles('qwen3'));
      const request = { sequences: [{ tokenIds: golden.tokenIds, targetStart: golden.responseStart }], loss: advantageLoss(golden) };
      await transformer.forwardBackward({ ...request, recompute: false });
      const kept = await transformer.gradients();
      transformer.clearGradients();
      await transformer.forwardBackward({ ...request, recompute: true });
      expectGradientsClose(await transformer.gradients(), kept);
    } finally {
      transformer.dispose();
    }
  });
});
