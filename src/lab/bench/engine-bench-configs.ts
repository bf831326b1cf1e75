/** The model shapes `clawrl bench engine` measures (random weights; nothing is downloaded). */

export interface EngineBenchConfig {
  name: string;
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ffn: number;
  tied: boolean;
}

export const engineBenchConfigs: readonly EngineBenchConfig[] = [
  { name: 'test-100k', vocab: 512, hidden: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 176, tied: true },
  { name: 'small-5m', vocab: 8192, hidden: 256, layers: 4, heads: 4, kvHeads: 2, ffn: 768, tied: true },
  { name: 'smollm2-135m-shape', vocab: 49152, hidden: 576, layers: 30, heads: 9, kvHeads: 3, ffn: 1536, tied: true },
];

/** The workload of every measurement, the same for clawrl and the PyTorch peer. */
export const engineBenchWorkload = { seqLen: 256, promptLen: 64, samplePromptLen: 32, newTokens: 64, steps: 3 } as const;

/** A Hugging Face `config.json` object for a bench shape. */
export function huggingFaceConfigOf(config: EngineBenchConfig): Record<string, unknown> {
  return {
    model_type: 'llama',
    vocab_size: config.vocab,
    hidden_size: config.hidden,
    intermediate_size: config.ffn,
    num_hidden_layers: config.layers,
    num_attention_heads: config.heads,
    num_key_value_heads: config.kvHeads,
    max_position_embeddings: 2048,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: config.tied,
    bos_token_id: 1,
    eos_token_id: 2,
  };
}
