/**
 * Continuous batching: every sampling request of one model joins one running batch. Each step runs
 * one ragged forward (`ragged-forward.ts`) over a decode row per running sequence plus, when a new
 * prompt is waiting, one chunk of its prefill; a request that arrives while others decode joins at
 * the next step, and a finished sequence leaves at once (its KV is freed, nothing is compacted).
 *
 * What a request gets does not depend on its company: its rows' attention runs over its own cache
 * with its own positions, its prefill is cut at the same chunk boundaries (every `prefillChunkTokens`
 * from where its prefill starts), its tokens are drawn with its own seeded generator in its own
 * sequence order, and its constraint, stop checks and abort are its own. Only the linear layers'
 * matmuls see other rows, which leaves each row's values as they are (checked against solo runs to
 * 1e-5 in `continuous-batcher.test.ts`).
 *
 * Requests may name different LoRA adapters (`SampleRequest.adapter`): they still share each step.
 * The step's rows are ordered so each adapter's rows are adjacent, and each adapter's delta is
 * computed over its own rows only (`ragged-forward.ts`), so a request gets the values it gets alone
 * with its adapter (checked to 1e-4 in `multi-adapter-batching.test.ts`). Kept prompt prefixes are
 * looked up and stored under the request's adapter.
 *
 * Admission is first come, first served under two limits: running sequences (`maxRunningSequences`)
 * and the KV they may grow to (`kvCacheBytes`, reserved at admission for prompt + maxTokens, so a
 * running sequence never runs out). A request that alone exceeds the budget runs when the batch is
 * otherwise empty.
 */
import * as tf from '@tensorflow/tfjs';
import { createSeededRandom } from '../core/seeded-random.js';
import type { SeededRandom } from '../core/seeded-random.js';
import type { PrefixCache } from './prefix-cache.js';
import { raggedHidden } from './ragged-forward.js';
import { createLoraStacks } from './segmented-lora.js';
import type { RaggedRow } from './ragged-forward.js';
import { chooseToken } from './sampling-distribution.js';
import type { SamplingParameters } from './sampling-distribution.js';
import { tidyResult } from './tidy-result.js';
import { headLogits } from './token-logprobs.js';
import type { LoraAdapter } from './lora-adapter.js';
import type { ForwardModel, LayerCache } from './transformer-forward.js';
import { cacheBytes, validateSampleRequest } from './transformer-sampler.js';
import type { SampledSequence, SampleOptions, SampleRequest, SampleResult } from './transformer-sampler.js';

export interface ContinuousBatcherOptions {
  /** Sequences decoding at once (a request with n choices counts n). */
  maxRunningSequences: number;
  /** KV memory the running sequences may hold, in bytes. */
  kvCacheBytes: number;
  /** Prompt tokens prefilled per step, so a long prompt does not stall the running streams. */
  prefillChunkTokens: number;
  prefixCache: PrefixCache | null;
}

export interface ContinuousBatcher {
  sample(request: SampleRequest): Promise<SampleResult>;
  /** Sequences in the running batch and requests waiting to join it. */
  readonly load: { runningSequences: number; waitingRequests: number };
  /** Resolves once nothing runs or waits. */
  whenIdle(): Promise<void>;
}

interface DecodeRow {
  sequenceIndex: number;
  cache: LayerCache[];
  nextTokenId: number;
}

interface Job {
  request: SampleRequest;
  options: SampleOptions;
  parameters: SamplingParameters;
  random: SeededRandom;
  stopTokens: Set<number>;
  sequences: SampledSequence[];
  reservedBytes: number;
  /** Prefill: the prompt's KV so far (null before the first chunk); decode: null. */
  prefillCache: LayerCache[] | null;
  prefilled: number;
  rows: DecodeRow[] | null;
  resolve: (result: SampleResult) => void;
  reject: (error: unknown) => void;
}

/** Who each forward row is, and whether its last token's logits are needed. */
interface StepRow {
  job: Job;
  decodeRow: DecodeRow | null;
  length: number;
  needsLogits: boolean;
}

function cacheTensors(cache: readonly LayerCache[] | null): tf.Tensor[] {
  return (cache ?? []).flatMap((layer) => [layer.key, layer.value]);
}

/**
 * Reorders a step's rows (both lists alike) so the rows of each adapter are adjacent, in order of
 * first appearance: each adapter's LoRA delta is then one matmul pair over one slice. A row's values
 * do not depend on its place in the step.
 */
function groupByAdapter(stepRows: StepRow[], forwardRows: RaggedRow[]): void {
  const rank = new Map<LoraAdapter | null | undefined, number>();
  for (const row of forwardRows) if (!rank.has(row.adapter)) rank.set(row.adapter, rank.size);
  if (rank.size < 2) return;
  const order = forwardRows.map((row, index) => ({ index, rank: rank.get(row.adapter) ?? 0 })).sort((left, right) => left.rank - right.rank || left.index - right.index);
  const steps = order.map(({ index }) => stepRows[index] as StepRow);
  const forwards = order.map(({ index }) => forwardRows[index] as RaggedRow);
  stepRows.splice(0, stepRows.length, ...steps);
  forwardRows.splice(0, forwardRows.length, ...forwards);
}

export function createContinuousBatcher(model: () => ForwardModel, options: ContinuousBatcherOptions): ContinuousBatcher {
  const waiting: Job[] = [];
  const running: Job[] = [];
  /** Several adapters' factors side by side, kept while a step's adapters stay the same (`segmented-lora.ts`). */
  const loraStacks = createLoraStacks();
  let loop: Promise<void> | null = null;
  /** The adapter a request runs with: its own, or the model's. */
  const adapterOf = (job: Job): LoraAdapter | null => (job.request.adapter === undefined ? model().lora : job.request.adapter);
  const runningSequences = () => running.reduce((sum, job) => sum + (job.rows?.length ?? job.options.n), 0);
  const reservedBytes = () => running.reduce((sum, job) => sum + job.reservedBytes, 0);

  const admit = () => {
    while (waiting.length > 0) {
      const job = waiting[0] as Job;
      const fits = runningSequences() + job.options.n <= options.maxRunningSequences && reservedBytes() + job.reservedBytes <= options.kvCacheBytes;
      if (!fits && running.length > 0) return;
      waiting.shift();
      const hit = options.prefixCache?.lookup(job.options.promptTokenIds, adapterOf(job)) ?? null;
      if (hit !== null) {
        job.prefillCache = hit.cache;
        job.prefilled = hit.length;
      }
      running.push(job);
    }
  };

  /** Every tensor a running job still needs. */
  const liveTensors = () => new Set(running.flatMap((job) => [...cacheTensors(job.prefillCache), ...(job.rows ?? []).flatMap((row) => cacheTensors(row.cache))]));

  const release = (candidates: tf.Tensor[]) => {
    const live = liveTensors();
    for (const tensor of new Set(candidates)) if (!live.has(tensor) && !tensor.isDisposed) tensor.dispose();
  };

  const finish = (job: Job) => {
    running.splice(running.indexOf(job), 1);
    job.resolve({ sequences: job.sequences });
  };

  /** Draws each sequence's next token from its logits row; returns the rows that go on. */
  const choose = (job: Job, rows: DecodeRow[], logitsOf: (row: DecodeRow) => Float32Array): DecodeRow[] => {
    const next: DecodeRow[] = [];
    for (const row of rows) {
      const sequence = job.sequences[row.sequenceIndex] as SampledSequence;
      const allowed = job.request.allowedTokens?.(row.sequenceIndex) ?? undefined;
      const choice = chooseToken(logitsOf(row), job.parameters, job.random, allowed);
      sequence.tokenIds.push(choice.tokenId);
      sequence.logprobs.push(choice.logprob);
      sequence.top.push(choice.top);
      const callbackSaysStop = job.request.onToken?.({ ...choice, sequenceIndex: row.sequenceIndex, step: sequence.tokenIds.length - 1 }) === 'stop';
      if (job.stopTokens.has(choice.tokenId) || callbackSaysStop) sequence.finishReason = 'stop';
      else if (sequence.tokenIds.length < job.options.maxTokens) next.push({ ...row, nextTokenId: choice.tokenId });
    }
    return next;
  };

  const step = async () => {
    const stepRows: StepRow[] = [];
    const forwardRows: RaggedRow[] = [];
    let prefillBudget = options.prefillChunkTokens;
    for (const job of [...running]) {
      if (job.request.signal?.aborted === true) {
        for (const row of job.rows ?? job.sequences.map((_, sequenceIndex) => ({ sequenceIndex }))) (job.sequences[row.sequenceIndex] as SampledSequence).finishReason = 'aborted';
        const held = [...cacheTensors(job.prefillCache), ...(job.rows ?? []).flatMap((row) => cacheTensors(row.cache))];
        finish(job);
        release(held);
        continue;
      }
      if (job.rows !== null) {
        for (const row of job.rows) {
          stepRows.push({ job, decodeRow: row, length: 1, needsLogits: true });
          forwardRows.push({ tokenIds: [row.nextTokenId], cache: row.cache, adapter: adapterOf(job) });
        }
        continue;
      }
      // Chunk boundaries depend only on where this prompt's prefill starts, never on the company.
      const prompt = job.options.promptTokenIds;
      const length = Math.min(options.prefillChunkTokens, prompt.length - job.prefilled);
      if (length > prefillBudget) continue;
      prefillBudget -= length;
      const last = job.prefilled + length === prompt.length;
      stepRows.push({ job, decodeRow: null, length, needsLogits: last });
      forwardRows.push({ tokenIds: prompt.slice(job.prefilled, job.prefilled + length), cache: job.prefillCache, adapter: adapterOf(job) });
    }
    if (stepRows.length === 0) return;
    groupByAdapter(stepRows, forwardRows);
    const previous = forwardRows.flatMap((row) => cacheTensors(row.cache));
    let output: { logits: tf.Tensor2D; caches: LayerCache[][] };
    try {
      output = tidyResult(() => {
        const forwardModel = model();
        const result = raggedHidden(forwardModel, forwardRows, loraStacks);
        const lastIndices: number[] = [];
        let position = 0;
        for (const row of stepRows) {
          position += row.length;
          if (row.needsLogits) lastIndices.push(position - 1);
        }
        const picked = tf.gather(result.hidden, tf.tensor1d(lastIndices, 'int32')) as tf.Tensor2D;
        return { logits: headLogits(picked, forwardModel.parameters.lmHead, 1), caches: result.caches };
      });
    } catch (error) {
      // A failed step fails the requests in it; the others keep their place.
      const failed = new Set(stepRows.map((row) => row.job));
      for (const job of failed) running.splice(running.indexOf(job), 1);
      release(previous);
      for (const job of failed) job.reject(error);
      return;
    }
    const logits = (await output.logits.data()) as Float32Array;
    output.logits.dispose();
    const vocabSize = model().shape.vocabSize;
    const created = output.caches.flatMap((cache) => cacheTensors(cache));
    let logitsRow = 0;
    const rowOfLogits = new Map<DecodeRow, number>();
    const firstTokenJobs = new Map<Job, number>();
    stepRows.forEach((row, index) => {
      const cache = output.caches[index] as LayerCache[];
      if (row.decodeRow !== null) {
        row.decodeRow.cache = cache;
        rowOfLogits.set(row.decodeRow, logitsRow);
      } else {
        row.job.prefillCache = cache;
        row.job.prefilled += row.length;
        if (row.needsLogits) firstTokenJobs.set(row.job, logitsRow);
      }
      if (row.needsLogits) logitsRow += 1;
    });
    const logitsAt = (index: number) => logits.subarray(index * vocabSize, (index + 1) * vocabSize);
    for (const job of [...running]) {
      const firstRow = firstTokenJobs.get(job);
      if (firstRow !== undefined) {
        const promptCache = job.prefillCache as LayerCache[];
        options.prefixCache?.store(job.options.promptTokenIds, promptCache, adapterOf(job));
        job.prefillCache = null;
        // Every sample starts from the same prompt distribution and, until it decodes, the same KV.
        const rows = job.sequences.map((_, sequenceIndex) => ({ sequenceIndex, cache: promptCache, nextTokenId: 0 }));
        job.rows = rows;
        job.rows = choose(job, rows, () => logitsAt(firstRow));
      } else if (job.rows !== null && job.rows.every((row) => rowOfLogits.has(row))) {
        job.rows = choose(job, job.rows, (row) => logitsAt(rowOfLogits.get(row) ?? 0));
      }
      if (job.rows !== null && job.rows.length === 0) finish(job);
    }
    release([...previous, ...created]);
  };

  const runLoop = async () => {
    try {
      for (admit(); running.length > 0; admit()) {
        try {
          await step();
        } catch (error) {
          // Bookkeeping past the forward failed: no running request can trust its state.
          const failed = running.splice(0, running.length);
          for (const job of failed) job.reject(error);
        }
        // Let the event loop deliver new requests, aborts and messages between steps.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      loop = null;
      // Idle: the kept stacks may hold copies of adapters unloaded since.
      loraStacks.dispose();
    }
  };

  return {
    get load() {
      return { runningSequences: runningSequences(), waitingRequests: waiting.length };
    },
    sample(request) {
      let parsed: SampleOptions;
      const shape = model().shape;
      try {
        parsed = validateSampleRequest(shape, request, options.prefillChunkTokens);
      } catch (error) {
        return Promise.reject(error);
      }
      return new Promise<SampleResult>((resolve, reject) => {
        waiting.push({
          request,
          options: parsed,
          parameters: { temperature: parsed.temperature, topP: parsed.topP, topK: parsed.topK, topLogprobs: parsed.topLogprobs },
          random: createSeededRandom(parsed.seed ?? Math.floor(Math.random() * 2 ** 32)),
          stopTokens: new Set(parsed.stopTokenIds),
          sequences: Array.from({ length: parsed.n }, () => ({ tokenIds: [], logprobs: [], top: [], finishReason: 'length' })),
          reservedBytes: cacheBytes(shape, parsed.n, parsed.promptTokenIds.length + parsed.maxTokens),
          prefillCache: null,
          prefilled: 0,
          rows: null,
          resolve,
          reject,
        });
        loop ??= runLoop();
      });
    },
    whenIdle: () => loop ?? Promise.resolve(),
  };
}
