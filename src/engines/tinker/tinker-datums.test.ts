import { describe, expect, it } from 'vitest';
import type { TrainingDatum } from '../../spec/training-engine.js';
import { writeSafetensors } from '../../model/safetensors.js';
import { readCheckpointArchive } from './read-checkpoint-archive.js';
import { wireDatumOf, wireLossConfigOf } from './tinker-api.js';
import { writeTarGz } from './testing/write-tar-gz.js';
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

describe('Tinker checkpoint archives', () => {
  const adapter = (names: string[]) => ({
    'adapter_config.json': new TextEncoder().encode(JSON.stringify({ peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['q_proj'] })),
    'adapter_model.safetensors': writeSafetensors(new Map(names.map((name) => [name, { dtype: 'F32' as const, shape: [1, 1], data: Float32Array.of(1) }]))),
  });
  it('reads the PEFT adapter of an archive, and refuses Tinker-only module names and what is no archive', () => {
    const files = adapter(['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight']);
    const read = readCheckpointArchive(writeTarGz(Object.fromEntries(Object.entries(files).map(([name, bytes]) => [`step_1/${name}`, bytes]))));
    expect(read.files).toEqual(files);
    const foreign = readCheckpointArchive(writeTarGz(adapter(['base_model.model.model.unembed_tokens.lora_A.weight'])));
    expect(foreign).toMatchObject({ files: null, reason: expect.stringContaining('unembed_tokens') });
    expect(readCheckpointArchive(Uint8Array.of(1, 2, 3))).toMatchObject({ files: null, reason: expect.stringContaining('not a .tar.gz') });
  });
});
