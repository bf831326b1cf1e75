// Dev tool (not shipped, not tested): CPU time of one `clawrl bench engine` train step (the bench's workload:
// LoRA r16 on q,k,v,o, clipped-PPO token loss, AdamW, T=256) for builds in alternating rounds, and of the PyTorch
// peer's train step at one thread. CPU time and the fastest step are what a shared machine still measures
// faithfully: wall time there follows the other load, and PyTorch's two OpenMP threads collapse under it.
// Usage, each build built (`npm run build`):
//   node scripts/engine-cpu/train-cpu.mjs old=/path/to/old-worktree new=/path/to/new-worktree [--rounds=3] [--steps=6] [--config=small-5m] [--peer]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const builds = Object.fromEntries(args.filter((a) => a.includes('=') && !a.startsWith('--')).map((a) => a.split('=')));
const rounds = Number(option('rounds', 3));
const steps = Number(option('steps', 6));
const configName = option('config', 'small-5m');
const script = fileURLToPath(import.meta.url);

if (args[0] === '--measure') {
  const root = args[1];
  const load = (file) => import(path.join(root, 'dist', file));
  const { createSeededRandom } = await load('core/seeded-random.js');
  const { createRandomWeights } = await load('model/random-weights.js');
  const { loadTransformer } = await load('model/transformer.js');
  const { transformerShapeFromHuggingFaceConfig } = await load('model/transformer-shape.js');
  const { initializeTensorBackend } = await load('tensor/initialize-tensor-backend.js');
  const { engineBenchConfigs, engineBenchWorkload, huggingFaceConfigOf } = await load('lab/bench/engine-bench-configs.js');
  const config = engineBenchConfigs.find((entry) => entry.name === configName);
  const tf = await initializeTensorBackend({ backend: 'wasm' });
  const shape = transformerShapeFromHuggingFaceConfig(huggingFaceConfigOf(config));
  const lora = { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] };
  const transformer = loadTransformer({ shape, weights: createRandomWeights(shape, { seed: 1 }), trainParams: 'lora', lora });
  const random = createSeededRandom(2);
  const { seqLen, promptLen } = engineBenchWorkload;
  const sequence = Array.from({ length: seqLen }, () => random.integer(3, config.vocab - 1));
  const rolloutLogprobs = tf.fill([seqLen - promptLen], -2);
  const advantages = tf.tensor1d(Array.from({ length: seqLen - promptLen }, (_, index) => (index % 2 === 0 ? 1 : -1)));
  const optimizer = transformer.createOptimizer({ learningRate: 1e-4, weightDecay: 0.01, maxGradientNorm: 1 });
  const loss = ([logprobs]) =>
    tf.tidy(() => {
      const ratio = tf.exp(tf.sub(logprobs, rolloutLogprobs));
      return tf.neg(tf.mean(tf.minimum(tf.mul(ratio, advantages), tf.mul(tf.clipByValue(ratio, 0.8, 1.28), advantages))));
    });
  const step = async () => {
    await transformer.forwardBackward({ sequences: [{ tokenIds: sequence, targetStart: promptLen }], loss });
    optimizer.step();
  };
  await step();
  const cpu = [];
  for (let index = 0; index < steps; index++) {
    const started = process.cpuUsage();
    await step();
    const used = process.cpuUsage(started);
    cpu.push((used.user + used.system) / 1000);
  }
  process.stdout.write(`${JSON.stringify({ fastestMs: Math.min(...cpu), medianMs: [...cpu].sort((a, b) => a - b)[cpu.length >> 1] })}\n`);
  process.exit(0);
}

const root = Object.values(builds)[0];
const { engineBenchConfigs, engineBenchWorkload } = await import(path.join(root, 'dist/lab/bench/engine-bench-configs.js'));
const results = Object.fromEntries(Object.keys(builds).map((label) => [label, []]));
for (let round = 0; round < rounds; round++) {
  for (const [label, buildRoot] of Object.entries(builds)) {
    results[label].push(JSON.parse(execFileSync(process.execPath, [script, '--measure', buildRoot, `--config=${configName}`, `--steps=${steps}`], { encoding: 'utf8' })));
  }
}
const perCpuSecond = (milliseconds) => Math.round(engineBenchWorkload.seqLen / (milliseconds / 1000));
for (const [label, runs] of Object.entries(results)) {
  const fastest = Math.min(...runs.map((run) => run.fastestMs));
  console.log(`${label}: fastest train step ${fastest.toFixed(1)} ms CPU (${perCpuSecond(fastest)} tok per CPU-second); per round ${runs.map((run) => run.fastestMs.toFixed(0)).join(' ')} ms`);
}
if (args.includes('--peer')) {
  const config = engineBenchConfigs.find((entry) => entry.name === configName);
  const peer = path.resolve(path.dirname(script), '..', 'pytorch-peer', 'engine_peer.py');
  const request = { configs: [config], threads: 1, ...engineBenchWorkload, newTokens: 4, steps, clock: 'process' };
  const output = execFileSync('/usr/bin/python3', [peer], { input: JSON.stringify(request), encoding: 'utf8' });
  const figures = JSON.parse(output.trim().split('\n').at(-1)).configs[0];
  console.log(`PyTorch, one thread: fastest train step ${(1000 * engineBenchWorkload.seqLen / figures.trainTokPerS).toFixed(1)} ms CPU (${Math.round(figures.trainTokPerS)} tok per CPU-second)`);
}
