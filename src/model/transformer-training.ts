/**
 * Forward-backward over the trainable parameters (LoRA factors or every base weight) with a
 * caller-given token-level loss. Gradients are summed into accumulators across calls (so a batch
 * may be split into several calls) until `clear` — the Tinker shape of forward_backward then
 * optim_step.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { ensureFits } from '../tensor/index.js';
import { anchorLogLikelihood, defaultChunkRows, tokenLogprobs } from './token-logprobs.js';
import { transformerHidden } from './transformer-forward.js';
import type { ForwardModel } from './transformer-forward.js';

export const trainingSequenceSchema = z.object({
  tokenIds: z.array(z.number().int().nonnegative()).min(2),
  /**
   * Index of the first token whose log-prob is wanted (≥ 1); default 1 (every token after the
   * first). Usually the prompt length, so the lm head runs over response positions only.
   */
  targetStart: z.number().int().positive().optional(),
  /**
   * Per target position, more tokens whose log-probs the loss wants at that position (OPD's
   * support set); positions may list different numbers of tokens.
   */
  supportTokenIds: z.array(z.array(z.number().int().nonnegative())).optional(),
  /**
   * Per target position, the anchor: the reference's likeliest tokens and their probabilities
   * under it. The loss gets their log-likelihood with the rest of the mass at each position
   * (`anchorLogLikelihood`). Every position lists the same number of distinct tokens.
   */
  anchor: z.object({ tokenIds: z.array(z.array(z.number().int().nonnegative())), weights: z.array(z.array(z.number().min(0).max(1))) }).optional(),
});

export type TrainingSequence = z.infer<typeof trainingSequenceSchema>;

/**
 * Given one log-prob tensor per sequence (tokens targetStart..T-1), for sequences with support
 * tokens their log-probs [targets, supportWidth] (padded columns repeat the target), and for
 * sequences with an anchor its log-likelihood per target [targets], returns the scalar loss.
 */
export type TokenLoss = (tokenLogprobs: tf.Tensor1D[], supportLogprobs: (tf.Tensor2D | null)[], anchorLogprobs: (tf.Tensor1D | null)[]) => tf.Scalar;

/** Columns of a sequence's support tensor: the most tokens any position lists. */
export function supportWidth(support: readonly (readonly unknown[])[]): number {
  return support.reduce((widest, position) => Math.max(widest, position.length), 0);
}

function anchorWidth(anchor: NonNullable<TrainingSequence['anchor']>): number {
  return anchor.tokenIds[0]?.length ?? 0;
}

function checkAnchor(anchor: NonNullable<TrainingSequence['anchor']>, targets: number, vocabSize: number): void {
  const width = anchorWidth(anchor);
  if (anchor.tokenIds.length !== targets || anchor.weights.length !== targets) {
    throw new ClawrlError('invalid_request', `the anchor has ${anchor.tokenIds.length} positions for ${targets} targets`);
  }
  anchor.tokenIds.forEach((ids, position) => {
    if (width === 0 || ids.length !== width || anchor.weights[position]?.length !== width) {
      throw new ClawrlError('invalid_request', 'every anchor position needs the same number of tokens and weights');
    }
    if (ids.some((tokenId) => tokenId >= vocabSize)) throw new ClawrlError('invalid_request', 'anchor token id outside the vocabulary');
    if (new Set(ids).size !== ids.length) throw new ClawrlError('invalid_request', 'anchor token ids must be distinct within a position');
  });
}

export interface ForwardBackwardRequest {
  sequences: TrainingSequence[];
  loss: TokenLoss;
  /** Distribution the log-probs are taken under; match the sampling temperature. Default 1. */
  temperature?: number;
  /**
   * Rebuild each layer's activations in backward instead of keeping them. Default: on when
   * keeping them would take more than a quarter of the remaining wasm heap budget.
   */
  recompute?: boolean;
}

export interface ForwardBackwardResult {
  loss: number;
  /** The log-probs the loss saw, per sequence. */
  tokenLogprobs: number[][];
  /** Per sequence, the support tokens' log-probs as listed (null without support tokens). */
  supportLogprobs: (number[][] | null)[];
  /** Per sequence, the anchor's log-likelihood at each target position (null without an anchor). */
  anchorLogprobs: (number[] | null)[];
}

/** Trainable variables by their exported name (PEFT or HF), and which are stored transposed. */
export interface TrainableSet {
  variables: ReadonlyMap<string, tf.Variable>;
  transposedNames: ReadonlySet<string>;
}

export interface GradientAccumulator {
  readonly gradients: ReadonlyMap<string, tf.Tensor>;
  forwardBackward(model: ForwardModel, trainable: TrainableSet, request: ForwardBackwardRequest): Promise<ForwardBackwardResult>;
  /** Gradients in the exported layout (PEFT [r, in] / [out, r], HF [out, in]). */
  exportGradients(trainable: TrainableSet): Promise<Map<string, { shape: number[]; data: Float32Array }>>;
  /**
   * Replaces the accumulated gradients with ones in the exported layout, e.g. the average of
   * several data-parallel workers' `exportGradients`, so the optimizer steps on them.
   */
  importGradients(trainable: TrainableSet, gradients: ReadonlyMap<string, { shape: number[]; data: Float32Array }>): void;
  clear(): void;
}

/** Most bytes of target softmax kept from forward to backward in one forwardBackward call. */
export const keptProbabilityBytes = 64 * 1024 * 1024;

function activationBytesPerToken(model: ForwardModel, length: number, recompute: boolean): number {
  const { hiddenSize: d, intermediateSize: f, headCount, headDim, keyValueHeadCount, layerCount } = model.shape;
  const perLayer = 14 * d + 8 * headCount * headDim + 4 * keyValueHeadCount * headDim + 3 * headCount * length + 6 * f;
  return 4 * (recompute ? layerCount * d + perLayer : layerCount * perLayer);
}

/**
 * The support tokens' log-probs [targets, width], one head pass per column: column j holds each
 * position's j-th support token, or its target where the position lists fewer.
 */
function supportLogprobs(
  support: readonly (readonly number[])[] | undefined,
  targets: readonly number[],
  logprobsOf: (columnTargets: tf.Tensor1D) => tf.Tensor1D,
): tf.Tensor2D | null {
  if (support === undefined) return null;
  const width = supportWidth(support);
  if (width === 0) return null;
  const columns: tf.Tensor1D[] = [];
  for (let column = 0; column < width; column += 1) {
    const ids = support.map((position, index) => position[column] ?? (targets[index] as number));
    columns.push(logprobsOf(tf.tensor1d(ids, 'int32')));
  }
  return tf.stack(columns, 1) as tf.Tensor2D;
}

export function createGradientAccumulator(): GradientAccumulator {
  const gradients = new Map<string, tf.Tensor>();
  return {
    gradients,
    async forwardBackward(model, trainable, request) {
      const sequences = request.sequences.map((sequence) => trainingSequenceSchema.parse(sequence));
      const temperature = request.temperature ?? 1;
      if (!(temperature > 0)) throw new ClawrlError('invalid_request', 'temperature must be > 0 for training', { param: 'temperature' });
      let totalTokens = 0;
      let longest = 0;
      for (const sequence of sequences) {
        const start = sequence.targetStart ?? 1;
        if (start >= sequence.tokenIds.length) {
          throw new ClawrlError('invalid_request', `targetStart ${start} leaves no target in a ${sequence.tokenIds.length}-token sequence`);
        }
        if (sequence.tokenIds.length > model.shape.maxPositionEmbeddings) {
          throw new ClawrlError('context_length_exceeded', `sequence of ${sequence.tokenIds.length} tokens exceeds ${model.shape.maxPositionEmbeddings} positions`);
        }
        if (sequence.tokenIds.some((tokenId) => tokenId >= model.shape.vocabSize)) {
          throw new ClawrlError('invalid_request', 'token id outside the vocabulary');
        }
        if (sequence.supportTokenIds !== undefined) {
          if (sequence.supportTokenIds.length !== sequence.tokenIds.length - start) {
            throw new ClawrlError('invalid_request', `supportTokenIds has ${sequence.supportTokenIds.length} positions for ${sequence.tokenIds.length - start} targets`);
          }
          if (sequence.supportTokenIds.some((position) => position.some((tokenId) => tokenId >= model.shape.vocabSize))) {
            throw new ClawrlError('invalid_request', 'support token id outside the vocabulary');
          }
        }
        if (sequence.anchor !== undefined) checkAnchor(sequence.anchor, sequence.tokenIds.length - start, model.shape.vocabSize);
        totalTokens += sequence.tokenIds.length;
        longest = Math.max(longest, sequence.tokenIds.length);
      }
      const names = [...trainable.variables.keys()];
      const variables = [...trainable.variables.values()];
      const keptBytes = totalTokens * activationBytesPerToken(model, longest, false);
      const recompute = request.recompute ?? keptBytes > 512 * 1024 * 1024;
      // The target log-probs keep their softmax for backward (one head product fewer) while all
      // sequences' [targets, V] blocks together stay under keptProbabilityBytes.
      const targetCount = sequences.reduce((count, sequence) => count + sequence.tokenIds.length - (sequence.targetStart ?? 1), 0);
      const probabilityBytes = 4 * targetCount * model.shape.vocabSize;
      const keepProbabilities = probabilityBytes <= keptProbabilityBytes;
      const neededBytes =
        totalTokens * activationBytesPerToken(model, longest, recompute) +
        3 * 4 * model.shape.hiddenSize * longest * model.shape.layerCount +
        (keepProbabilities ? probabilityBytes : 0);
      ensureFits(neededBytes, { purpose: `training on ${totalTokens} tokens` });
      const chunkRows = defaultChunkRows(model.shape.vocabSize);
      const kept: tf.Tensor1D[] = [];
      const keptSupport: (tf.Tensor2D | null)[] = [];
      const keptAnchor: (tf.Tensor1D | null)[] = [];
      const { value, grads } = tf.variableGrads(() => {
        const supportPerSequence: (tf.Tensor2D | null)[] = [];
        const anchorPerSequence: (tf.Tensor1D | null)[] = [];
        const perSequence = sequences.map((sequence) => {
          const start = sequence.targetStart ?? 1;
          const length = sequence.tokenIds.length;
          const input = tf.tensor2d(sequence.tokenIds, [1, length], 'int32');
          const { hidden } = transformerHidden(model, input, { offset: 0, cache: null, keepCache: false, recompute });
          const rows = tf.slice(hidden, [start - 1, 0], [length - start, -1]);
          const targets = tf.tensor1d(sequence.tokenIds.slice(start), 'int32');
          const logprobs = tokenLogprobs(rows, model.parameters.lmHead, targets, {
            temperature,
            chunkRows,
            trainableHead: model.parameters.trainable,
            keepProbabilities,
          });
          kept.push(tf.keep(logprobs));
          const support = supportLogprobs(sequence.supportTokenIds, sequence.tokenIds.slice(start), (columnTargets) =>
            tokenLogprobs(rows, model.parameters.lmHead, columnTargets, { temperature, chunkRows, trainableHead: model.parameters.trainable }),
          );
          supportPerSequence.push(support);
          keptSupport.push(support === null ? null : tf.keep(support));
          const anchor = sequence.anchor === undefined
            ? null
            : anchorLogLikelihood(
              rows,
              model.parameters.lmHead,
              tf.tensor2d(sequence.anchor.tokenIds, [length - start, anchorWidth(sequence.anchor)], 'int32'),
              tf.tensor2d(sequence.anchor.weights, [length - start, anchorWidth(sequence.anchor)]),
              { temperature, chunkRows, trainableHead: model.parameters.trainable },
            );
          anchorPerSequence.push(anchor);
          keptAnchor.push(anchor === null ? null : tf.keep(anchor));
          return logprobs;
        });
        const loss = request.loss(perSequence, supportPerSequence, anchorPerSequence);
        if (loss.rank !== 0) throw new ClawrlError('invalid_request', 'the loss function must return a scalar');
        return loss;
      }, variables);
      try {
        const variableNames = new Map(variables.map((variable, index) => [variable.name, names[index] ?? '']));
        for (const [variableName, gradient] of Object.entries(grads)) {
          const name = variableNames.get(variableName);
          if (name === undefined) {
            gradient.dispose();
            continue;
          }
          const previous = gradients.get(name);
          if (previous === undefined) gradients.set(name, gradient);
          else {
            gradients.set(name, tf.add(previous, gradient));
            tf.dispose([previous, gradient]);
          }
        }
        const lossValue = (await value.data())[0] ?? Number.NaN;
        const logprobs = await Promise.all(kept.map(async (tensor) => Array.from(await tensor.data())));
        const support = await Promise.all(
          keptSupport.map(async (tensor, index) => {
            const listed = sequences[index]?.supportTokenIds;
            if (tensor === null || listed === undefined) return null;
            const rows = (await tensor.array()) as number[][];
            return listed.map((position, row) => (rows[row] ?? []).slice(0, position.length));
          }),
        );
        const anchor = await Promise.all(keptAnchor.map(async (tensor) => (tensor === null ? null : Array.from(await tensor.data()))));
        return { loss: lossValue, tokenLogprobs: logprobs, supportLogprobs: support, anchorLogprobs: anchor };
      } finally {
        value.dispose();
        tf.dispose(kept);
        tf.dispose(keptSupport.filter((tensor): tensor is tf.Tensor2D => tensor !== null));
        tf.dispose(keptAnchor.filter((tensor): tensor is tf.Tensor1D => tensor !== null));
      }
    },
    async exportGradients(trainable) {
      const out = new Map<string, { shape: number[]; data: Float32Array }>();
      for (const name of trainable.variables.keys()) {
        const gradient = gradients.get(name);
        if (gradient === undefined) continue;
        const layout = trainable.transposedNames.has(name) ? tf.transpose(gradient) : gradient;
        out.set(name, { shape: layout.shape.slice(), data: new Float32Array(await layout.data()) });
        if (layout !== gradient) layout.dispose();
      }
      return out;
    },
    importGradients(trainable, imported) {
      const next = new Map<string, tf.Tensor>();
      try {
        for (const [name, variable] of trainable.variables) {
          const source = imported.get(name);
          if (source === undefined) continue;
          const transposed = trainable.transposedNames.has(name);
          const expected = transposed ? [...variable.shape].reverse() : variable.shape;
          if (source.shape.join() !== expected.join()) {
            throw new ClawrlError('invalid_request', `gradient '${name}' has shape ${JSON.stringify(source.shape)}, expected ${JSON.stringify(expected)}`);
          }
          next.set(name, tf.tidy(() => {
            const tensor = tf.tensor(source.data, source.shape, 'float32');
            return transposed ? tf.transpose(tensor) : tensor;
          }));
        }
      } catch (error) {
        tf.dispose([...next.values()]);
        throw error;
      }
      for (const gradient of gradients.values()) gradient.dispose();
      gradients.clear();
      for (const [name, gradient] of next) gradients.set(name, gradient);
    },
    clear() {
      for (const gradient of gradients.values()) gradient.dispose();
      gradients.clear();
    },
  };
}
