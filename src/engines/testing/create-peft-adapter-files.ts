/** A small, valid PEFT LoRA adapter (as PEFT writes it) for tests of adapter loading. */
import { writeSafetensors, type FloatTensorData } from '../../model/safetensors.js';

export interface PeftAdapterFilesOptions {
  /** `base_model_name_or_path`. */
  baseModel: string;
  rank?: number;
  layers?: number;
  hiddenSize?: number;
  /** Varies the weights, so two versions differ. */
  seed?: number;
}

export function createPeftAdapterFiles(options: PeftAdapterFilesOptions): Record<string, Uint8Array> {
  const rank = options.rank ?? 4;
  const hidden = options.hiddenSize ?? 8;
  const modules = ['q_proj', 'v_proj'];
  const tensors = new Map<string, FloatTensorData>();
  const fill = (size: number) => Float32Array.from({ length: size }, (_, index) => ((index + (options.seed ?? 0)) % 7) / 10);
  for (let layer = 0; layer < (options.layers ?? 2); layer += 1) {
    for (const module of modules) {
      const path = `base_model.model.model.layers.${layer}.self_attn.${module}`;
      tensors.set(`${path}.lora_A.weight`, { shape: [rank, hidden], data: fill(rank * hidden) });
      tensors.set(`${path}.lora_B.weight`, { shape: [hidden, rank], data: fill(hidden * rank) });
    }
  }
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: options.baseModel,
    r: rank,
    lora_alpha: rank * 2,
    lora_dropout: 0,
    bias: 'none',
    target_modules: modules,
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
  };
  return {
    'adapter_config.json': new TextEncoder().encode(JSON.stringify(config)),
    'adapter_model.safetensors': writeSafetensors(tensors),
  };
}
