/**
 * A `TrainingEngine` on a Tinker-compatible service (`engines.md` §5): a LoRA training client of a
 * base model named on the service, trained with `forward_backward` / `optim_step`, published with
 * `save_weights_for_sampler`, checkpointed with `save_weights` / `load_weights`.
 *
 * A published version's artifact holds `tinker-checkpoint.json` (see `TinkerCheckpointFile`): the
 * sampler path an engine sampling on Tinker loads, and the training weights path `resetWeights`
 * continues from. With `downloadAdapters` it also holds the PEFT adapter of the sampler checkpoint
 * (`read-checkpoint-archive.ts`), which engines that load PEFT adapters serve. A download or a
 * conversion that fails never fails the step: the version is published without PEFT files, the
 * reason is kept in `tinker-checkpoint.json` (`peftAdapter`) and logged, and only the Tinker engine
 * can serve that version (the others keep serving the previous one).
 *
 * A batch goes in chunks of at most the server's `fwdbwd_max_chunk_len` datums (1024 without one)
 * and, by an upper bound of their JSON size, at most its `fwdbwd_max_chunk_bytes_count` bytes (2 MB
 * without one), as the SDK cuts its own chunks by count and by estimated bytes.
 *
 * ℓ_old (for `decoupled_ppo` without proximal log-probs) is read with `forward`; a server without
 * that route (the hosted service speaks only `forward_backward` since SDK 0.25) is asked for a
 * `forward_backward` with every advantage 0 instead. Both Tinker losses are linear in the advantage
 * (importance_sampling −exp(ℓ − μ)·A, ppo −min(r·A, clip(r)·A)), so that pass adds a zero gradient;
 * its μ is sent as 0 so exp(ℓ − μ) ≤ 1 cannot overflow into 0·∞.
 *
 * `load_weights` must be a model's first request (SkyRL enforces it), so `loadState` and
 * `resetWeights` continue on a new training client of the same base model unless the current one
 * has not been used yet, and unload the old one. Tinker reports no optimizer step count, so it is
 * counted here and carried in the saved state's name (`…_o<steps>_…`), which is how a restarted
 * trainer resumes its count.
 *
 * Lineages (`TrainingEngine.lineage`, a user's adapter) get training clients of their own, opened
 * when first trained, at most `maxTrainingClients` at once (`../training-lineages.ts`): beyond them
 * the least recently used idle one is saved (`save_weights`, with its optimizer) and its client
 * loads the lineage that needs it, as `loadState` does.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { silentLogger, type Logger } from '../../spec/logger.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import type { ForwardBackwardInput, ForwardBackwardOutput, OptimizerStepOutput, TrainingDatum, TrainingEngine, TrainingEngineCapabilities } from '../../spec/training-engine.js';
import type { TinkerClient } from './create-tinker-client.js';
import {
  forwardBackwardBody,
  forwardBackwardResultSchema,
  loadWeightsBody,
  optimStepBody,
  optimStepResultSchema,
  parseTinkerPath,
  saveBody,
  savedPathResultSchema,
  wireDatumOf,
  wireLossConfigOf,
  type AdamParams,
} from './tinker-api.js';
import { readCheckpointArchive, type AdapterFromArchive } from './read-checkpoint-archive.js';
import { withTrainingLineages } from '../training-lineages.js';
import { checkTinkerBatch, lossTokensOf, needsCurrentLogprobs, responseLogprobsOf, tinkerBatchOf, tinkerLossOf, type TinkerBatch } from './tinker-datums.js';

export interface TinkerTrainingEngineOptions {
  client: TinkerClient;
  /** The base model as the service names it, e.g. `Qwen/Qwen3-4B-Instruct-2507`. */
  baseModel: string;
  /** Default 16, as the local trainer. */
  loraRank?: number;
  /**
   * AdamW; defaults as the local trainer's (lr 1e-4, betas (0.9, 0.98), ε 1e-8, weight decay 0.1,
   * gradient clip 1) rather than Tinker's (β2 0.95, ε 1e-12, no decay, no clip), so both trainers
   * follow the same optimizer.
   */
  optimizer?: { learningRate?: number; beta1?: number; beta2?: number; epsilon?: number; weightDecay?: number; maxGradientNorm?: number };
  /**
   * Also download each published version's sampler checkpoint archive and put its PEFT adapter in
   * the artifact, so engines that load PEFT adapters (local, vLLM, SGLang) can serve it. Default false.
   */
  downloadAdapters?: boolean;
  /** Training clients held at once, one per lineage in use (the engine's own included); default `defaultMaxTrainingClients`. */
  maxTrainingClients?: number;
  logger?: Logger;
}

/** Training clients a Tinker engine holds at once unless told otherwise (`--max-training-clients`). */
export const defaultMaxTrainingClients = 4;

export const tinkerCheckpointFileName = 'tinker-checkpoint.json';

/** What a published Tinker version's artifact carries. */
export const tinkerCheckpointFileSchema = z.object({
  format: z.literal('clawrl-tinker-checkpoint'),
  baseModel: z.string(),
  loraRank: z.number(),
  /** `tinker://…/sampler_weights/…`: what a sampling session loads. */
  samplerPath: z.string(),
  /** `tinker://…/weights/…`: what `resetWeights` loads (weights only, fresh optimizer). */
  weightsPath: z.string(),
  /** Whether the version carries its PEFT adapter, and why not; absent where none was asked for. */
  peftAdapter: z.union([z.object({ published: z.literal(true) }), z.object({ published: z.literal(false), reason: z.string() })]).optional(),
});
export type TinkerCheckpointFile = z.infer<typeof tinkerCheckpointFileSchema>;

export const tinkerTrainingCapabilities: TrainingEngineCapabilities = {
  losses: ['decoupled_ppo', 'ppo', 'importance_sampling'],
  referenceLogprobs: false,
  anchor: false,
  supportSets: false,
  proximalLogprobs: true,
  // Tinker's trainer scores the model's own distribution (tinker-datums.ts).
  anyTemperature: false,
};

/** Datums per call where the server names no limit: the SDK's `fwdbwd_max_chunk_len` default. */
const defaultChunkDatums = 1024;
/** JSON bytes per call where the server names no limit. */
const defaultChunkBytes = 2_000_000;

/**
 * An upper bound of a datum's JSON size: per position an input and a target id (≤ 7 characters
 * each with the comma) and a log-prob and an advantage (≤ 25 characters each, the longest a double
 * prints), plus the fixed keys.
 */
export const datumJsonBytesBound = (datum: TrainingDatum) => 300 + (datum.promptTokenIds.length + datum.responseTokenIds.length) * 64;

/** `data` cut in order into chunks of at most `maxDatums` datums and `maxBytes` bytes (a larger datum goes alone). */
export function chunksOf<Datum>(data: readonly Datum[], bytesOf: (datum: Datum) => number, maxDatums: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let current: Datum[] = [];
  let bytes = 0;
  for (const datum of data) {
    const size = bytesOf(datum);
    if (current.length > 0 && (current.length >= maxDatums || bytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(datum);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function stepsOfStateName(name: string): number | null {
  const match = /_o(\d+)_[a-z0-9]+$/.exec(name);
  return match === null ? null : Number(match[1]);
}

export async function createTinkerTrainingEngine(options: TinkerTrainingEngineOptions): Promise<TrainingEngine> {
  const served = (await options.client.serverCapabilities()).models.map((model) => model.name);
  if (served.length > 0 && !served.includes(options.baseModel)) {
    throw new ClawrlError('configuration_error', `the Tinker service does not train '${options.baseModel}'; it serves: ${served.join(', ')} (--tinker-base-model)`);
  }
  return withTrainingLineages({
    first: await createTrainingClient(options, true),
    capacity: options.maxTrainingClients ?? defaultMaxTrainingClients,
    // A lineage's client shares the connection, which the first client closes.
    openClient: () => createTrainingClient(options, false),
  });
}

/** One training client of the service; `ownsConnection`: its `close` closes the Tinker client too. */
async function createTrainingClient(options: TinkerTrainingEngineOptions, ownsConnection: boolean): Promise<TrainingEngine> {
  const { client, baseModel } = options;
  const logger = options.logger ?? silentLogger;
  const loraRank = options.loraRank ?? 16;
  const learningRate = options.optimizer?.learningRate ?? 1e-4;
  const adam: AdamParams = {
    learningRate,
    beta1: options.optimizer?.beta1 ?? 0.9,
    beta2: options.optimizer?.beta2 ?? 0.98,
    epsilon: options.optimizer?.epsilon ?? 1e-8,
    weightDecay: options.optimizer?.weightDecay ?? 0.1,
    maxGradientNorm: options.optimizer?.maxGradientNorm ?? 1,
  };
  let model = { id: await client.createModel(baseModel, loraRank), used: false };
  let steps = 0;
  let closed = false;
  const tag = randomUUID().slice(0, 8);

  function submit<Result>(path: string, body: (seqId: number) => object, schema: z.ZodType<Result>): Promise<Result> {
    if (closed) return Promise.reject(new ClawrlError('internal_error', 'the Tinker training engine is closed'));
    model.used = true;
    return client.submit(model.id, path, body, schema);
  }

  /** A training client whose first request can be a load (see the header). */
  async function freshModel(): Promise<void> {
    if (!model.used) return;
    const previous = model.id;
    model = { id: await client.createModel(baseModel, loraRank), used: false };
    await client.unloadModel(previous).catch((error: unknown) => logger.warn('unloading the previous Tinker training client failed', { modelId: previous, error: String(error) }));
  }

  const maxChunkDatums = client.limits.maxChunkDatums ?? defaultChunkDatums;
  const maxChunkBytes = client.limits.maxChunkBytes ?? defaultChunkBytes;
  let forwardRoute = true;

  async function runBatch(batch: TinkerBatch, forwardOnly: boolean) {
    const data = batch.sequences.map((sequence) => wireDatumOf(sequence.tokens, sequence.logprobs, sequence.advantages));
    const config = wireLossConfigOf(batch.clip);
    if (forwardOnly && forwardRoute) {
      try {
        return await submit('forward', (seqId) => forwardBackwardBody(model.id, seqId, data, batch.lossFunction, config, true), forwardBackwardResultSchema);
      } catch (error) {
        if (!ClawrlError.isInstance(error) || error.code !== 'not_found') throw error;
        logger.info('the Tinker service has no forward route; reading log-probs with a zero-advantage forward_backward', { error: error.message });
        forwardRoute = false;
      }
    }
    if (forwardOnly && batch.sequences.some((sequence) => sequence.advantages.some((advantage) => advantage !== 0))) {
      throw new ClawrlError('internal_error', 'a read of log-probs through forward_backward needs every advantage 0');
    }
    return submit('forward_backward', (seqId) => forwardBackwardBody(model.id, seqId, data, batch.lossFunction, config, false), forwardBackwardResultSchema);
  }

  async function forwardBackward(input: ForwardBackwardInput): Promise<ForwardBackwardOutput> {
    checkTinkerBatch(input.data, input.loss);
    const batchLossTokens = input.batchLossTokens ?? lossTokensOf(input.data);
    if (!(batchLossTokens > 0)) throw new ClawrlError('invalid_request', 'the batch has no loss tokens');
    const logprobs: number[][] = [];
    let loss = 0;
    for (const data of chunksOf(input.data, datumJsonBytesBound, maxChunkDatums, maxChunkBytes)) {
      let current: number[][] | null = null;
      if (needsCurrentLogprobs(data, input.loss)) {
        // A pass with zero advantages (and μ = 0) only reads ℓ on the weights the update will see.
        const still = data.map((datum) => ({ ...datum, advantages: datum.advantages.map(() => 0), rolloutLogprobs: datum.rolloutLogprobs.map(() => 0) }));
        const read = await runBatch(tinkerBatchOf(still, { name: 'importance_sampling' }, 1, null), true);
        current = data.map((datum, index) => responseLogprobsOf(datum, read.targetLogprobs[index] ?? []));
      }
      const batch = tinkerBatchOf(data, input.loss, batchLossTokens, current);
      const result = await runBatch(batch, false);
      const targets = result.targetLogprobs;
      if (targets.length !== data.length) throw new ClawrlError('upstream_error', `Tinker forward_backward returned ${targets.length} outputs for ${data.length} datums`);
      loss += result.lossSum ?? tinkerLossOf(batch, targets);
      data.forEach((datum, index) => logprobs.push(responseLogprobsOf(datum, targets[index] ?? [])));
    }
    return { loss, logprobs, referenceLogprobs: null, supportLogprobs: input.data.map(() => null), anchorKl: null };
  }

  /** The PEFT adapter of saved sampler weights, or why there is none: a failed download is an outcome here, not an error. */
  async function adapterOf(samplerPath: string, name: string): Promise<AdapterFromArchive> {
    const parsed = parseTinkerPath(samplerPath);
    try {
      return await readCheckpointArchive(await client.downloadCheckpointArchive(parsed?.modelId ?? model.id, parsed?.name ?? name), baseModel);
    } catch (error) {
      return { files: null, reason: `the archive download failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  async function save(kind: 'save_weights' | 'save_weights_for_sampler', name: string): Promise<string> {
    return (await submit(kind, (seqId) => saveBody(kind, model.id, seqId, name), savedPathResultSchema)).path;
  }

  async function load(path: string, withOptimizer: boolean): Promise<void> {
    await freshModel();
    try {
      await submit('load_weights', (seqId) => loadWeightsBody(model.id, seqId, path, withOptimizer), z.unknown());
    } catch (error) {
      if (ClawrlError.isInstance(error) && (error.code === 'invalid_request' || error.code === 'not_found')) {
        throw new ClawrlError('not_found', `the Tinker service cannot load '${path}': ${error.message}`, { cause: error });
      }
      throw error;
    }
  }

  return {
    engineId: 'tinker',
    info: { trainParams: 'lora', modelId: baseModel, learningRate },
    capabilities: tinkerTrainingCapabilities,
    forwardBackward,
    async optimizerStep(input = {}): Promise<OptimizerStepOutput> {
      const rate = input.learningRate ?? learningRate;
      const result = await submit('optim_step', (seqId) => optimStepBody(model.id, seqId, { ...adam, learningRate: rate }), optimStepResultSchema);
      steps += 1;
      const metrics = result.metrics ?? {};
      // The hosted service documents no gradient-norm metric; SkyRL names it `skyrl.ai/grad_norm`.
      // NaN when the service reports none.
      const gradientNorm = metrics['grad_norm'] ?? metrics['skyrl.ai/grad_norm'] ?? metrics['grad_norm:mean'] ?? metrics['optim/grad_norm'] ?? Number.NaN;
      return { gradientNorm, step: steps, learningRate: rate };
    },
    async publishWeights(version): Promise<PolicyArtifact> {
      const name = `clawrl-v${version}-${tag}-${steps}`;
      const samplerPath = await save('save_weights_for_sampler', name);
      const weightsPath = await save('save_weights', name);
      const adapter = options.downloadAdapters === true ? await adapterOf(samplerPath, name) : null;
      const file: TinkerCheckpointFile = {
        format: 'clawrl-tinker-checkpoint',
        baseModel,
        loraRank,
        samplerPath,
        weightsPath,
        ...(adapter === null ? {} : { peftAdapter: adapter.files === null ? { published: false as const, reason: adapter.reason } : { published: true as const } }),
      };
      const files: Record<string, Uint8Array> = { [tinkerCheckpointFileName]: new TextEncoder().encode(JSON.stringify(file, null, 2)) };
      if (adapter !== null && adapter.files !== null) Object.assign(files, adapter.files);
      if (adapter !== null && adapter.files === null) {
        logger.warn(`policy version ${version} is published without its PEFT adapter: engines that load PEFT adapters (local, vLLM, SGLang) keep serving the previous version, and only --engine tinker can serve this one`, { version, reason: adapter.reason, samplerPath });
      }
      return { version, kind: 'adapter', files };
    },
    async saveState(name) {
      const safe = name.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 100);
      return save('save_weights', `${safe}_o${steps}_${randomUUID().slice(0, 6).replace(/-/g, '0')}`);
    },
    async loadState(reference) {
      const parsed = parseTinkerPath(reference);
      const savedSteps = parsed === null ? null : stepsOfStateName(parsed.name);
      if (parsed === null || parsed.kind !== 'weights' || savedSteps === null) throw new ClawrlError('not_found', `'${reference}' is not a training state this engine saved (tinker://…/weights/…_o<steps>_…)`);
      await load(reference, true);
      steps = savedSteps;
    },
    async resetWeights(artifact) {
      if (artifact.kind === 'full') throw new ClawrlError('unsupported', 'Tinker trains LoRA adapters: it cannot continue from a full-weights version');
      if (artifact.kind === 'base') {
        await freshModel();
        steps = 0;
        return;
      }
      const bytes = artifact.files[tinkerCheckpointFileName];
      const file = bytes === undefined ? null : tinkerCheckpointFileSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      if (file === null || !file.success) throw new ClawrlError('unsupported', `policy version ${artifact.version} was not trained on Tinker (no ${tinkerCheckpointFileName}): the Tinker trainer cannot continue from it`);
      if (file.data.baseModel !== baseModel) throw new ClawrlError('unsupported', `policy version ${artifact.version} was trained on ${file.data.baseModel}, this trainer trains ${baseModel}`);
      await load(file.data.weightsPath, false);
      steps = 0;
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.unloadModel(model.id).catch((error: unknown) => logger.warn('unloading the Tinker training client failed', { error: String(error) }));
      if (ownsConnection) await client.close();
    },
  };
}
