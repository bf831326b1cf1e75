/**
 * A tiny Qwen2-shaped model folder for local-engine tests: the ChatML tokenizer fixture of
 * src/model plus random weights, written to a temporary folder as a Hugging Face model folder.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRandomWeights } from '../../../model/random-weights.js';
import { createSeededRandom } from '../../../core/seeded-random.js';
import { peftTensorName } from '../../../model/lora-adapter.js';
import { writeSafetensors, type FloatTensorData } from '../../../model/safetensors.js';
import { linearModulePath, linearModuleShape } from '../../../model/transformer-parameters.js';
import { transformerShapeFromHuggingFaceConfig } from '../../../model/transformer-shape.js';

const fixture = path.resolve(import.meta.dirname, '..', '..', '..', 'model', '__fixtures__', 'chatml-model');

export function createTinyModelFolder(options: { seed?: number } = {}): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-tiny-model-'));
  cpSync(fixture, folder, { recursive: true });
  // Room for the engine contract's long prompts.
  const config = { ...(JSON.parse(readFileSync(path.join(folder, 'config.json'), 'utf8')) as Record<string, unknown>), max_position_embeddings: 2048 };
  writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config, null, 2));
  const shape = transformerShapeFromHuggingFaceConfig(config);
  // A larger deviation than training init, so that sampling is not uniform noise.
  writeFileSync(path.join(folder, 'model.safetensors'), writeSafetensors(createRandomWeights(shape, { seed: options.seed ?? 7, standardDeviation: 0.2 })));
  return folder;
}

/** A PEFT adapter for the tiny model with nonzero A and B, so loading it changes the outputs. */
export function createTinyAdapterFiles(folder: string, seed: number): Record<string, Uint8Array> {
  const shape = transformerShapeFromHuggingFaceConfig(JSON.parse(readFileSync(path.join(folder, 'config.json'), 'utf8')));
  const rank = 4;
  const modules = ['q_proj', 'v_proj'] as const;
  const random = createSeededRandom(seed);
  const tensors = new Map<string, FloatTensorData>();
  for (let layer = 0; layer < shape.layerCount; layer += 1) {
    for (const module of modules) {
      const [out, input] = linearModuleShape(shape, module);
      const modulePath = linearModulePath(layer, module);
      const fill = (size: number) => Float32Array.from({ length: size }, () => random.nextNormal() * 0.5);
      tensors.set(peftTensorName(modulePath, 'A'), { shape: [rank, input], data: fill(rank * input) });
      tensors.set(peftTensorName(modulePath, 'B'), { shape: [out, rank], data: fill(out * rank) });
    }
  }
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r: rank,
    lora_alpha: 8,
    target_modules: [...modules],
    base_model_name_or_path: 'tiny',
    bias: 'none',
    use_rslora: false,
    modules_to_save: null,
  };
  return {
    'adapter_config.json': new TextEncoder().encode(JSON.stringify(config)),
    'adapter_model.safetensors': writeSafetensors(tensors),
  };
}
