/**
 * `clawrl bench engine`: train, score and sample throughput of the embedded engine against PyTorch
 * CPU (Debian's python3-torch with OpenBLAS, same thread count) in the same run. Every measurement
 * runs in a fresh process. One wasm instance uses one core, so clawrl's figures are given for one
 * instance and for two instances running at once (how the engine uses both cores: a sampler and a
 * trainer worker, or two data-parallel trainers); PyTorch uses two threads.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { engineBenchConfigs, engineBenchWorkload, type EngineBenchConfig } from './engine-bench-configs.js';

export interface EngineFigures {
  trainTokPerS: number;
  scoreTokPerS: number;
  sampleTokPerS: { b1: number; b8: number };
  peakRssMiB: number;
}

export interface EngineBenchEntry extends EngineFigures {
  name: string;
  params: number;
  /** One wasm instance (one core). The headline figures above are two instances at once. */
  singleInstance: EngineFigures;
  pytorch: { trainTokPerS: number; sampleTokPerS: { b1: number; b8: number } } | null;
  ratio: { train: number; sampleB1: number; sampleB8: number } | null;
}

export interface EngineBenchResult {
  configs: EngineBenchEntry[];
  pytorchNote: string;
  workload: typeof engineBenchWorkload;
}

const here = path.dirname(fileURLToPath(import.meta.url));

function parameterCount(config: EngineBenchConfig): number {
  const headDim = config.hidden / config.heads;
  const attention = config.hidden * headDim * (2 * config.heads + 2 * config.kvHeads);
  const mlp = 3 * config.hidden * config.ffn;
  const norms = 2 * config.hidden;
  return config.layers * (attention + mlp + norms) + config.vocab * config.hidden * (config.tied ? 1 : 2) + config.hidden;
}

function runConfig(config: EngineBenchConfig): Promise<EngineFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, 'run-engine-bench-config.js'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.on('data', (part: Buffer) => (output += part.toString('utf8')));
    child.stderr.on('data', (part: Buffer) => (errors += part.toString('utf8')));
    child.on('exit', (code) => {
      const line = output.trim().split('\n').at(-1);
      if (code !== 0 || line === undefined) reject(new Error(`engine bench of ${config.name} failed (${code}): ${errors.slice(-2000)}`));
      else resolve(JSON.parse(line) as EngineFigures);
    });
  });
}

const sum = (left: number, right: number) => Math.round((left + right) * 10) / 10;

async function runPytorchPeer(configs: readonly EngineBenchConfig[]): Promise<{ figures: Map<string, EngineFigures>; note: string }> {
  try {
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', 'import torch; print(torch.__version__)']);
    const version = stdout.trim();
    const script = path.resolve(here, '..', '..', '..', 'scripts', 'pytorch-peer', 'engine_peer.py');
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('/usr/bin/python3', [script], { stdio: ['pipe', 'pipe', 'pipe'] });
      let text = '';
      let errors = '';
      child.stdout.on('data', (part: Buffer) => (text += part.toString('utf8')));
      child.stderr.on('data', (part: Buffer) => (errors += part.toString('utf8')));
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(errors.slice(-2000)))));
      child.stdin.end(JSON.stringify({ configs, threads: 2, ...engineBenchWorkload }));
    });
    const parsed = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { configs: Array<EngineFigures & { name: string }> };
    return { figures: new Map(parsed.configs.map((entry) => [entry.name, entry])), note: `PyTorch ${version}, 2 threads` };
  } catch (error) {
    return { figures: new Map(), note: `PyTorch peer not run: ${(error as Error).message.split('\n')[0]}` };
  }
}

export async function runEngineBench(options: { configNames?: string[]; onProgress?: (message: string) => void } = {}): Promise<EngineBenchResult> {
  const configs = engineBenchConfigs.filter((config) => options.configNames === undefined || options.configNames.includes(config.name));
  const entries: EngineBenchEntry[] = [];
  for (const config of configs) {
    options.onProgress?.(`${config.name}: one instance`);
    const single = await runConfig(config);
    options.onProgress?.(`${config.name}: two instances at once`);
    const [first, second] = await Promise.all([runConfig(config), runConfig(config)]);
    entries.push({
      name: config.name,
      params: parameterCount(config),
      trainTokPerS: sum(first.trainTokPerS, second.trainTokPerS),
      scoreTokPerS: sum(first.scoreTokPerS, second.scoreTokPerS),
      sampleTokPerS: { b1: sum(first.sampleTokPerS.b1, second.sampleTokPerS.b1), b8: sum(first.sampleTokPerS.b8, second.sampleTokPerS.b8) },
      peakRssMiB: sum(first.peakRssMiB, second.peakRssMiB),
      singleInstance: single,
      pytorch: null,
      ratio: null,
    });
  }
  options.onProgress?.('PyTorch peer');
  const peer = await runPytorchPeer(configs);
  for (const entry of entries) {
    const reference = peer.figures.get(entry.name);
    if (reference === undefined) continue;
    const tenth = (value: number) => Math.round(value * 10) / 10;
    entry.pytorch = {
      trainTokPerS: tenth(reference.trainTokPerS),
      sampleTokPerS: { b1: tenth(reference.sampleTokPerS.b1), b8: tenth(reference.sampleTokPerS.b8) },
    };
    const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;
    entry.ratio = {
      train: ratio(entry.trainTokPerS, reference.trainTokPerS),
      sampleB1: ratio(entry.sampleTokPerS.b1, reference.sampleTokPerS.b1),
      sampleB8: ratio(entry.sampleTokPerS.b8, reference.sampleTokPerS.b8),
    };
  }
  return { configs: entries, pytorchNote: peer.note, workload: engineBenchWorkload };
}
