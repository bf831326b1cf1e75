/**
 * `clawrl bench serving --adapters N`: many LoRA adapters served at once by the embedded engine, on
 * the built-in model, against the base model alone in the same run:
 *
 * - tokens/s at concurrency 8 when each of the 8 streams names a different adapter, over the base
 *   alone (goal: at least 0.8×); and when the streams cycle through all N adapters, more than
 *   `--max-resident-adapters` holds, so adapters are loaded and evicted as they go;
 * - the base alone at concurrency 8 over concurrency 1 (goal: at least 4×);
 * - the time to first token of an adapter never loaded before (goal: at most 1 s), idle and while 8
 *   streams run, beside a resident adapter's.
 *
 * The adapters are random LoRA weights made in this process (rank 16, alpha 32, on q/k/v/o, B's
 * entries normal with deviation 0.02), handed to the engine as policy versions 1..N through its
 * artifact source, as the record store hands trained versions. Requests are the built-in model's
 * arithmetic questions with replies of varying length (max_tokens 16 to 192; the model stops where it
 * stops), 32 a figure at concurrency 8 (8 streams, each sending its next request when its last ends),
 * 8 one after another at concurrency 1. Each figure is measured three times, the variants
 * interleaved so background load falls on all alike; the median is reported with the three values.
 * It runs the engine in this process (its sampler worker thread), without the gateway, so what it
 * measures is the engine; `bench serving` without `--adapters` measures through the server.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRandomAdapterFiles } from '../../model/random-weights.js';
import { transformerShapeFromHuggingFaceConfig } from '../../model/transformer-shape.js';
import type { GenerateRequest, InferenceEngine, PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { percentile } from './load-generator.js';

export interface AdapterServingBenchOptions {
  /** The built-in model's folder (config.json gives the adapters' shapes). */
  modelDirectory: string;
  /** The embedded engine on that model; the bench closes it. */
  createEngine(): Promise<InferenceEngine>;
  /** Distinct adapters made and served (versions 1..N, at least 9). */
  adapters: number;
  repeats: number;
  /** Requests a concurrency-8 figure sends (a concurrency-1 figure sends a quarter). */
  requestsPerFigure: number;
  onProgress?: (message: string) => void;
}

export const defaultAdapterServingBenchOptions = { adapters: 64, repeats: 3, requestsPerFigure: 32 };

/** One variant's figure over the repeats: the median and each repeat's value. */
export interface RepeatedFigure {
  median: number;
  repeats: number[];
}

export interface AdapterServingBenchResult {
  model: string;
  adapters: { count: number; rank: number; alpha: number; targetModules: string[]; note: string };
  concurrency: number;
  tokensPerSecond: {
    baseConcurrency1: RepeatedFigure;
    baseConcurrency8: RepeatedFigure;
    /** Each of the 8 streams on its own adapter, all resident. */
    eightAdaptersConcurrency8: RepeatedFigure;
    /** Streams cycling through all the adapters: loads and evictions as they go. */
    allAdaptersConcurrency8: RepeatedFigure;
  };
  /** Seconds each figure's work took, per repeat, so a reader sees it is not a sub-second blip. */
  secondsPerFigure: Record<keyof AdapterServingBenchResult['tokensPerSecond'], number[]>;
  completionTokensPerFigure: Record<keyof AdapterServingBenchResult['tokensPerSecond'], number[]>;
  ratios: {
    /** eightAdaptersConcurrency8 over baseConcurrency8, per repeat (goal ≥ 0.8). */
    eightAdaptersOverBase: RepeatedFigure;
    allAdaptersOverBase: RepeatedFigure;
    /** baseConcurrency8 over baseConcurrency1, per repeat (goal ≥ 4). */
    concurrency8OverConcurrency1: RepeatedFigure;
  };
  firstTokenMs: { coldIdle: RepeatedFigure; warmIdle: RepeatedFigure; coldUnderLoad: RepeatedFigure };
  goal: { eightAdaptersOverBase: number; coldFirstTokenMs: number; concurrency8OverConcurrency1: number };
}

const adapterOptions = { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] as ('q_proj' | 'k_proj' | 'v_proj' | 'o_proj')[] };
const replyLengths = [16, 48, 96, 192, 32, 128, 64, 160];
const concurrency = 8;

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function repeated(values: number[]): RepeatedFigure {
  return { median: round(percentile(values, 0.5)), repeats: values.map((value) => round(value)) };
}

function question(index: number, version: PolicyVersion | undefined, maxTokens?: number): GenerateRequest {
  const a = 3 + ((index * 7) % 40);
  const b = 2 + ((index * 11) % 30);
  return {
    messages: [{ role: 'user', content: `Mia has ${a} stickers and gets ${b} more from a friend. How many stickers does she have now? Explain each step.` }],
    tools: [],
    toolChoice: 'auto',
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: maxTokens ?? replyLengths[index % replyLengths.length] ?? 64, seed: index },
    ...(version === undefined ? {} : { policyVersion: version }),
  };
}

/** Runs one request; its completion tokens and time to first token. */
async function generate(engine: InferenceEngine, request: GenerateRequest): Promise<{ tokens: number; firstTokenMs: number }> {
  const started = performance.now();
  let firstTokenMs = Number.NaN;
  let tokens = 0;
  for await (const event of engine.generate(request, new AbortController().signal)) {
    if (event.type === 'tokens' && Number.isNaN(firstTokenMs)) firstTokenMs = performance.now() - started;
    if (event.type === 'end') tokens = event.result.usage.completionTokens;
  }
  return { tokens, firstTokenMs };
}

/** `requests` requests over `streams` closed-loop streams; `versionOf(request index, stream)` picks each one's version. */
async function throughput(engine: InferenceEngine, streams: number, requests: number, versionOf: (index: number, stream: number) => PolicyVersion | undefined) {
  const started = performance.now();
  let next = 0;
  let tokens = 0;
  await Promise.all(
    Array.from({ length: streams }, async (_, stream) => {
      for (let index = next++; index < requests; index = next++) {
        // Read after the await: `tokens += await ...` would add to the total as it was before this request.
        const produced = (await generate(engine, question(index, versionOf(index, stream)))).tokens;
        tokens += produced;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { tokensPerSecond: tokens / seconds, seconds: round(seconds, 3), tokens };
}

export async function runAdapterServingBench(options: AdapterServingBenchOptions): Promise<AdapterServingBenchResult> {
  const progress = options.onProgress ?? (() => undefined);
  if (options.adapters < concurrency + 1) throw new RangeError(`--adapters must be at least ${concurrency + 1}`);
  await initializeTensorBackend({ backend: 'wasm' });
  const shape = transformerShapeFromHuggingFaceConfig(JSON.parse(readFileSync(path.join(options.modelDirectory, 'config.json'), 'utf8')));
  progress(`making ${options.adapters} random rank-${adapterOptions.rank} adapters`);
  const artifacts = new Map<PolicyVersion, PolicyArtifact>();
  for (let version = 1; version <= options.adapters; version += 1) {
    const files = await createRandomAdapterFiles(shape, { ...adapterOptions, seed: 1000 + version, baseModelNameOrPath: 'builtin:tiny' });
    artifacts.set(version, { version, kind: 'adapter', files });
  }
  const engine = await options.createEngine();
  engine.setPolicyArtifactSource?.(async (version) => artifacts.get(version) ?? null);
  const variants = {
    baseConcurrency1: { streams: 1, requests: Math.max(1, options.requestsPerFigure / 4), versionOf: () => 0 },
    baseConcurrency8: { streams: concurrency, requests: options.requestsPerFigure, versionOf: () => 0 },
    eightAdaptersConcurrency8: { streams: concurrency, requests: options.requestsPerFigure, versionOf: (_index: number, stream: number) => stream + 1 },
    allAdaptersConcurrency8: { streams: concurrency, requests: options.requestsPerFigure, versionOf: (index: number) => 1 + ((index * 5) % options.adapters) },
  };
  type Variant = keyof typeof variants;
  const names = Object.keys(variants) as Variant[];
  const rates = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Variant, number[]>;
  const seconds = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Variant, number[]>;
  const tokens = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Variant, number[]>;
  const coldIdle: number[] = [];
  const warmIdle: number[] = [];
  const coldUnderLoad: number[] = [];
  // Versions never loaded yet, for the cold first tokens: the last ones, which the cycling variant reaches last.
  const cold = Array.from({ length: options.adapters - concurrency }, (_, index) => options.adapters - index);
  const takeCold = () => {
    const version = cold.shift();
    if (version === undefined) throw new RangeError('no cold adapter left: raise --adapters');
    return version;
  };
  try {
    progress('warming up: the base and the 8 adapters of the 8-stream figure');
    await Promise.all(Array.from({ length: concurrency }, (_, stream) => generate(engine, question(stream, stream + 1, 8))));
    await generate(engine, question(0, 0, 8));
    for (let repeat = 1; repeat <= options.repeats; repeat += 1) {
      // The first tokens first: the cycling variant below makes adapters resident that these need cold.
      progress(`repeat ${repeat}: first tokens of a cold and a resident adapter, idle and under load`);
      coldIdle.push((await generate(engine, question(repeat, takeCold(), 4))).firstTokenMs);
      warmIdle.push((await generate(engine, question(repeat, 1, 4))).firstTokenMs);
      const load = throughput(engine, concurrency, concurrency, (_index, stream) => stream + 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      coldUnderLoad.push((await generate(engine, question(repeat, takeCold(), 4))).firstTokenMs);
      await load;
      for (const name of names) {
        progress(`repeat ${repeat}: ${name}`);
        const variant = variants[name];
        const figure = await throughput(engine, variant.streams, variant.requests, variant.versionOf);
        rates[name].push(figure.tokensPerSecond);
        seconds[name].push(figure.seconds);
        tokens[name].push(figure.tokens);
      }
      // The cycling variant made its adapters resident; keep the cold ones cold.
      cold.splice(0, cold.length, ...cold.filter((version) => !isReachedByCycling(version, options)));
    }
  } finally {
    await engine.close();
  }
  const ratio = (top: Variant, bottom: Variant) => repeated(rates[top].map((value, index) => value / (rates[bottom][index] ?? Number.NaN)));
  return {
    model: 'builtin:tiny',
    adapters: { count: options.adapters, ...adapterOptions, note: 'random LoRA weights made in-process (A kaiming-uniform, B normal with deviation 0.02), served as policy versions 1..N' },
    concurrency,
    tokensPerSecond: {
      baseConcurrency1: repeated(rates.baseConcurrency1),
      baseConcurrency8: repeated(rates.baseConcurrency8),
      eightAdaptersConcurrency8: repeated(rates.eightAdaptersConcurrency8),
      allAdaptersConcurrency8: repeated(rates.allAdaptersConcurrency8),
    },
    secondsPerFigure: seconds,
    completionTokensPerFigure: tokens,
    ratios: {
      eightAdaptersOverBase: ratio('eightAdaptersConcurrency8', 'baseConcurrency8'),
      allAdaptersOverBase: ratio('allAdaptersConcurrency8', 'baseConcurrency8'),
      concurrency8OverConcurrency1: ratio('baseConcurrency8', 'baseConcurrency1'),
    },
    firstTokenMs: { coldIdle: repeated(coldIdle), warmIdle: repeated(warmIdle), coldUnderLoad: repeated(coldUnderLoad) },
    goal: { eightAdaptersOverBase: 0.8, coldFirstTokenMs: 1000, concurrency8OverConcurrency1: 4 },
  };
}

/** Whether the cycling variant's requests named `version` (it may still be resident). */
function isReachedByCycling(version: PolicyVersion, options: Pick<AdapterServingBenchOptions, 'adapters' | 'requestsPerFigure'>): boolean {
  for (let index = 0; index < options.requestsPerFigure; index += 1) if (1 + ((index * 5) % options.adapters) === version) return true;
  return false;
}
