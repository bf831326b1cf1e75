/**
 * One configuration of `clawrl bench engine`, in a process of its own so its peak RSS is its own:
 * `node run-engine-bench-config.js '<config json>'` prints one JSON line of figures.
 * Train: LoRA r16/alpha 32 on q,k,v,o, a clipped-PPO token loss, AdamW, T=256, B=1 (the PyTorch
 * peer's workload). Score: teacher-forced log-probs at T=256. Sample: KV cache, temperature 1,
 * 64 new tokens after a 32-token prompt, batch 1 and 8 (tok/s = batch × 64 / wall time).
 */
import type { Scalar } from '@tensorflow/tfjs';
import { createSeededRandom } from '../../core/seeded-random.js';
import { createRandomWeights } from '../../model/random-weights.js';
import { loadTransformer } from '../../model/transformer.js';
import { transformerShapeFromHuggingFaceConfig } from '../../model/transformer-shape.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { engineBenchWorkload, huggingFaceConfigOf, type EngineBenchConfig } from './engine-bench-configs.js';

const config = JSON.parse(process.argv[2] ?? '{}') as EngineBenchConfig;
const tf = await initializeTensorBackend({ backend: 'wasm' });
const shape = transformerShapeFromHuggingFaceConfig(huggingFaceConfigOf(config));
const transformer = loadTransformer({
  shape,
  weights: createRandomWeights(shape, { seed: 1 }),
  trainParams: 'lora',
  lora: { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] },
});
const random = createSeededRandom(2);
const tokens = (count: number) => Array.from({ length: count }, () => random.integer(3, config.vocab - 1));
const { seqLen, promptLen, samplePromptLen, newTokens, steps } = engineBenchWorkload;

const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

const sequence = tokens(seqLen);
const rolloutLogprobs = tf.fill([seqLen - promptLen], -2);
const advantages = tf.tensor1d(Array.from({ length: seqLen - promptLen }, (_, index) => (index % 2 === 0 ? 1 : -1)));
const optimizer = transformer.createOptimizer({ learningRate: 1e-4, weightDecay: 0.01, maxGradientNorm: 1 });
const trainStep = async () => {
  await transformer.forwardBackward({
    sequences: [{ tokenIds: sequence, targetStart: promptLen }],
    loss: ([logprobs]) =>
      tf.tidy(() => {
        const ratio = tf.exp(tf.sub(logprobs!, rolloutLogprobs));
        const clipped = tf.clipByValue(ratio, 0.8, 1.28);
        return tf.neg(tf.mean(tf.minimum(tf.mul(ratio, advantages), tf.mul(clipped, advantages)))) as Scalar;
      }),
  });
  optimizer.step();
};
await trainStep();
const trainTimes: number[] = [];
for (let step = 0; step < steps; step += 1) trainTimes.push(await timed(trainStep));
const trainSeconds = median(trainTimes);

const scoreRequest = { promptTokenIds: sequence.slice(0, 1), continuationTokenIds: sequence.slice(1) };
await transformer.score(scoreRequest);
const scoreSeconds: number[] = [];
for (let step = 0; step < steps; step += 1) scoreSeconds.push(await timed(() => transformer.score(scoreRequest)));

const prompt = tokens(samplePromptLen);
const sample = (n: number) => transformer.sample({ promptTokenIds: prompt, n, maxTokens: newTokens, temperature: 1, seed: 3 });
await sample(1);
const sampleSeconds = async (n: number) => {
  const times: number[] = [];
  for (let step = 0; step < Math.max(1, steps - 1); step += 1) times.push(await timed(() => sample(n)));
  return median(times);
};
const b1 = await sampleSeconds(1);
const b8 = await sampleSeconds(8);

const round = (value: number) => Math.round(value * 10) / 10;
process.stdout.write(
  `${JSON.stringify({
    name: config.name,
    trainTokPerS: round(seqLen / trainSeconds),
    scoreTokPerS: round((seqLen - 1) / median(scoreSeconds)),
    sampleTokPerS: { b1: round(newTokens / b1), b8: round((8 * newTokens) / b8) },
    peakRssMiB: round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
