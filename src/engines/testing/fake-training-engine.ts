/**
 * A `TrainingEngine` for tests of the training loop, which need a real optimizer but not a real
 * model: a bigram model (the logits of each response token are one row of a table, picked by the
 * token before it), small enough to train in microseconds in the test's own thread, so the
 * trainer's tests need no built `dist/` and no wasm workers.
 *
 * It implements the seam honestly, and runs the `TrainingEngine` contract
 * (`fake-training-engine.test.ts`): log-probs under log_softmax(row / temperature), every named
 * loss and term (`decoupledFormOf`: the clipped surrogate with its importance weight, the k3 KL to
 * the base, the anchor KL(q ‖ π) over the base's top K and the rest, OPD support sets, proximal
 * log-probs) with exact gradients, AdamW with a global gradient norm, published artifacts that
 * `resetWeights` restores, saved states, and the same refusals (`unsupported` for what its
 * capabilities leave out, `invalid_request` for misaligned data, `not_found` for unknown states).
 * It records every call for tests to read.
 */
import { clip, decoupledFormOf, defaultAnchorTopK, type PolicyLossOptions } from '../../core/rl/policy-loss.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import type {
  ForwardBackwardInput,
  ForwardBackwardOutput,
  OptimizerStepInput,
  TrainingDatum,
  TrainingEngine,
  TrainingEngineCapabilities,
} from '../../spec/training-engine.js';

export interface FakeTrainingEngineOptions {
  /** Token ids run from 0 to this − 1; default 128. */
  vocabularySize?: number;
  /** Default `lora`: artifacts are the change from the base (`adapter`); `full`: every weight. */
  trainParams?: 'lora' | 'full';
  /** Default 0.3: the table has one weight per context and token, so it takes larger steps than a model would. */
  learningRate?: number;
  /** Default: every loss and term; leave some out to stand for a remote engine. */
  capabilities?: Partial<TrainingEngineCapabilities>;
  /** Seeds the base weights; default 1. */
  seed?: number;
  /** Saved states shared with other fake engines, as a Tinker service's are between its training clients; default its own. */
  savedStates?: FakeSavedStates;
}

/** Saved states, by name (opaque outside this file). */
export type FakeSavedStates = Map<string, unknown>;

export interface FakeTrainingEngine extends TrainingEngine {
  readonly forwardBackwardCalls: ForwardBackwardInput[];
  readonly optimizerStepCalls: (OptimizerStepInput | undefined)[];
  readonly publishedVersions: PolicyVersion[];
}

const weightsFile = 'fake-weights.f64';
/**
 * Standard deviation of the base logits: peaked rows, as a language model's are, so the base's top
 * tokens hold most of the mass and moving the policy shows in the anchor's KL.
 */
const baseLogitScale = 5;
const adam = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };

interface OptimizerState {
  weights: Float64Array;
  firstMoment: Float64Array;
  secondMoment: Float64Array;
  /** Adam's own count, for bias correction; a reset starts it again. */
  adamSteps: number;
  steps: number;
}

const invalid = (message: string) => new ClawrlError('invalid_request', message);

/** max(−ρ·A, −clip(ρ)·A) and its derivative in ℓ (ρ = exp(ℓ − ℓ_old)): zero where the clipped side wins. */
function surrogate(ratio: number, advantage: number, options: PolicyLossOptions): { value: number; slope: number } {
  const unclipped = -ratio * advantage;
  const clipped = -clip(ratio, 1 - options.clipLow, 1 + options.clipHigh) * advantage;
  return clipped > unclipped ? { value: clipped, slope: 0 } : { value: unclipped, slope: unclipped };
}

function checkDatum(datum: TrainingDatum, index: number, vocabularySize: number): void {
  const length = datum.responseTokenIds.length;
  const aligned = { lossMask: datum.lossMask, advantages: datum.advantages, rolloutLogprobs: datum.rolloutLogprobs, proximalLogprobs: datum.proximalLogprobs ?? datum.lossMask, support: datum.support ?? datum.lossMask };
  for (const [name, values] of Object.entries(aligned)) {
    if (values.length !== length) throw invalid(`datum ${index}: ${name} has ${values.length} entries for ${length} response tokens`);
  }
  for (const id of [...datum.promptTokenIds, ...datum.responseTokenIds, ...(datum.support ?? []).flatMap((target) => target.tokenIds)]) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabularySize) throw invalid(`datum ${index}: token id ${id} is outside the vocabulary of ${vocabularySize}`);
  }
  for (const [position, target] of (datum.support ?? []).entries()) {
    if (target.advantages.length !== target.tokenIds.length || (target.proximalLogprobs !== undefined && target.proximalLogprobs.length !== target.tokenIds.length)) {
      throw invalid(`datum ${index}: the support set at position ${position} has ${target.tokenIds.length} tokens and other counts of advantages or log-probs`);
    }
  }
  if (!(datum.temperature > 0) || !Number.isFinite(datum.temperature)) throw invalid(`datum ${index}: temperature must be positive`);
}

export function createFakeTrainingEngine(options: FakeTrainingEngineOptions = {}): FakeTrainingEngine {
  const size = options.vocabularySize ?? 128;
  const trainParams = options.trainParams ?? 'lora';
  const capabilities: TrainingEngineCapabilities = {
    losses: ['decoupled_ppo', 'ppo', 'importance_sampling'],
    referenceLogprobs: true,
    anchor: true,
    supportSets: true,
    proximalLogprobs: true,
    anyTemperature: true,
    ...options.capabilities,
  };
  const random = createSeededRandom(options.seed ?? 1);
  const base = Float64Array.from({ length: size * size }, () => baseLogitScale * random.nextNormal());
  const fresh = (weights: Float64Array, steps: number): OptimizerState => ({
    weights,
    firstMoment: new Float64Array(size * size),
    secondMoment: new Float64Array(size * size),
    adamSteps: 0,
    steps,
  });
  let state = fresh(base.slice(), 0);
  let gradient = new Float64Array(size * size);
  const saved = (options.savedStates ?? new Map()) as Map<string, OptimizerState>;
  const copyOf = (from: OptimizerState): OptimizerState => ({ ...from, weights: from.weights.slice(), firstMoment: from.firstMoment.slice(), secondMoment: from.secondMoment.slice() });
  let closed = false;

  const open = () => {
    if (closed) throw new ClawrlError('unsupported', 'the fake training engine is closed');
  };

  /** log_softmax(row / T) of the row `context` picks. */
  function logSoftmax(weights: Float64Array, context: number, temperature: number): Float64Array {
    const row = weights.subarray(context * size, (context + 1) * size).map((value) => value / temperature);
    const max = row.reduce((best, value) => Math.max(best, value), Number.NEGATIVE_INFINITY);
    const logSum = max + Math.log(row.reduce((sum, value) => sum + Math.exp(value - max), 0));
    return row.map((value) => value - logSum);
  }

  function refusal(input: ForwardBackwardInput): string | null {
    const { loss, data } = input;
    if (!capabilities.losses.includes(loss.name)) return `the loss ${loss.name}`;
    if (loss.name === 'decoupled_ppo' && loss.klCoefficient > 0 && !capabilities.referenceLogprobs) return 'the KL to the base';
    if (loss.name === 'decoupled_ppo' && (loss.anchorCoefficient ?? 0) > 0 && !capabilities.anchor) return 'the anchor';
    if (data.some((datum) => datum.support !== undefined) && !capabilities.supportSets) return 'support sets';
    if (data.some((datum) => datum.proximalLogprobs !== undefined) && (!capabilities.proximalLogprobs || loss.name !== 'decoupled_ppo')) return `proximal log-probs with ${loss.name}`;
    if (data.some((datum) => datum.temperature !== 1) && !capabilities.anyTemperature) return 'a sampling temperature other than 1';
    return null;
  }

  const engine: FakeTrainingEngine = {
    engineId: 'fake',
    info: { trainParams, modelId: 'fake-bigram', learningRate: options.learningRate ?? 0.3 },
    capabilities,
    forwardBackwardCalls: [],
    optimizerStepCalls: [],
    publishedVersions: [],

    async forwardBackward(input) {
      open();
      engine.forwardBackwardCalls.push(input);
      const refused = refusal(input);
      if (refused !== null) throw new ClawrlError('unsupported', `The fake training engine does not compute ${refused}.`);
      input.data.forEach((datum, index) => checkDatum(datum, index, size));
      const { options: lossOptions, proximalIsRollout } = decoupledFormOf(input.loss);
      const klCoefficient = lossOptions.klCoefficient;
      const anchorCoefficient = lossOptions.anchorCoefficient ?? 0;
      const lossTokens = input.batchLossTokens ?? input.data.reduce((sum, datum) => sum + datum.lossMask.reduce((total, mask) => total + mask, 0), 0);
      const scale = lossTokens > 0 ? 1 / lossTokens : 0;
      let loss = 0;
      const output: Required<ForwardBackwardOutput> = { loss: 0, logprobs: [], referenceLogprobs: klCoefficient > 0 ? [] : null, supportLogprobs: [], anchorKl: anchorCoefficient > 0 ? [] : null };
      for (const datum of input.data) {
        const logprobs: number[] = [];
        const references: number[] = [];
        const anchors: number[] = [];
        const supportLogprobs: number[][] = [];
        datum.responseTokenIds.forEach((token, position) => {
          const context = position === 0 ? (datum.promptTokenIds.at(-1) ?? 0) : (datum.responseTokenIds[position - 1] as number);
          const row = logSoftmax(state.weights, context, datum.temperature);
          const baseRow = logSoftmax(base, context, datum.temperature);
          const probabilities = row.map(Math.exp);
          const logprob = row[token] as number;
          logprobs.push(logprob);
          // d(term)/d(log-prob of a token), and the anchor's gradient in the logits directly.
          const slopes = new Map<number, number>();
          const addSlope = (id: number, slope: number) => slopes.set(id, (slopes.get(id) ?? 0) + slope);
          const mask = datum.lossMask[position] ?? 0;
          const rollout = datum.rolloutLogprobs[position] ?? 0;
          const proximal = datum.proximalLogprobs?.[position] ?? (proximalIsRollout ? rollout : logprob);
          const weight = Math.min(Math.exp(proximal - rollout), lossOptions.importanceSamplingCap);
          const sampled = surrogate(Math.exp(logprob - proximal), datum.advantages[position] ?? 0, lossOptions);
          let value = weight * sampled.value;
          addSlope(token, weight * sampled.slope);
          if (klCoefficient > 0) {
            const difference = (baseRow[token] as number) - logprob;
            references.push(baseRow[token] as number);
            value += klCoefficient * (Math.exp(difference) - difference - 1);
            addSlope(token, klCoefficient * (1 - Math.exp(difference)));
          }
          const target = datum.support?.[position];
          if (target !== undefined) {
            supportLogprobs.push(target.tokenIds.map((id) => row[id] as number));
            target.tokenIds.forEach((id, entry) => {
              const supportLogprob = row[id] as number;
              const term = surrogate(Math.exp(supportLogprob - (target.proximalLogprobs?.[entry] ?? supportLogprob)), target.advantages[entry] ?? 0, lossOptions);
              value += term.value;
              addSlope(id, term.slope);
            });
          }
          // Σ_i c_i·ℓ_i has gradient c_i − (Σ c)·π_i in the scaled logits.
          const logitGradient = new Float64Array(size);
          let slopeSum = 0;
          for (const [id, slope] of slopes) {
            logitGradient[id] = (logitGradient[id] ?? 0) + slope;
            slopeSum += slope;
          }
          for (let id = 0; id < size; id += 1) logitGradient[id] = (logitGradient[id] ?? 0) - slopeSum * (probabilities[id] as number);
          if (anchorCoefficient > 0) {
            const top = Array.from(baseRow.keys()).sort((a, b) => (baseRow[b] as number) - (baseRow[a] as number)).slice(0, lossOptions.anchorTopK ?? defaultAnchorTopK);
            const listed = new Set(top);
            const baseRest = Math.max(0, 1 - top.reduce((sum, id) => sum + Math.exp(baseRow[id] as number), 0));
            const rest = Math.max(1e-300, 1 - top.reduce((sum, id) => sum + (probabilities[id] as number), 0));
            // KL(q ‖ π) over the listed tokens and the rest of the mass.
            const kl = top.reduce((sum, id) => sum + Math.exp(baseRow[id] as number) * ((baseRow[id] as number) - (row[id] as number)), 0) + (baseRest > 0 ? baseRest * (Math.log(baseRest) - Math.log(rest)) : 0);
            anchors.push(kl);
            value += anchorCoefficient * kl;
            for (let id = 0; id < size; id += 1) {
              const probability = probabilities[id] as number;
              const listedPart = (listed.has(id) ? Math.exp(baseRow[id] as number) : 0) - (1 - baseRest) * probability;
              const restPart = baseRest * (probability * (listed.has(id) ? 0 : 1 / rest) - probability);
              logitGradient[id] = (logitGradient[id] ?? 0) - anchorCoefficient * (listedPart + restPart);
            }
          }
          if (mask === 0) return;
          loss += mask * value * scale;
          const factor = (mask * scale) / datum.temperature;
          for (let id = 0; id < size; id += 1) gradient[context * size + id] = (gradient[context * size + id] ?? 0) + factor * (logitGradient[id] as number);
        });
        output.logprobs.push(logprobs);
        output.referenceLogprobs?.push(references);
        output.anchorKl?.push(anchors);
        output.supportLogprobs.push(datum.support === undefined ? null : supportLogprobs);
      }
      output.loss = loss;
      return output;
    },

    async optimizerStep(input) {
      open();
      engine.optimizerStepCalls.push(input);
      const learningRate = input?.learningRate ?? engine.info.learningRate;
      const gradientNorm = Math.sqrt(gradient.reduce((sum, value) => sum + value * value, 0));
      state.adamSteps += 1;
      state.steps += 1;
      const correction1 = 1 - adam.beta1 ** state.adamSteps;
      const correction2 = 1 - adam.beta2 ** state.adamSteps;
      for (let index = 0; index < gradient.length; index += 1) {
        const value = gradient[index] as number;
        const first = adam.beta1 * (state.firstMoment[index] as number) + (1 - adam.beta1) * value;
        const second = adam.beta2 * (state.secondMoment[index] as number) + (1 - adam.beta2) * value * value;
        state.firstMoment[index] = first;
        state.secondMoment[index] = second;
        state.weights[index] = (state.weights[index] as number) - (learningRate * (first / correction1)) / (Math.sqrt(second / correction2) + adam.epsilon);
      }
      gradient = new Float64Array(size * size);
      return { gradientNorm, step: state.steps, learningRate };
    },

    async publishWeights(version) {
      open();
      engine.publishedVersions.push(version);
      const weights = trainParams === 'full' ? state.weights.slice() : state.weights.map((value, index) => value - (base[index] as number));
      return { version, kind: trainParams === 'full' ? 'full' : 'adapter', files: { [weightsFile]: new Uint8Array(weights.buffer) } };
    },

    async saveState(name) {
      open();
      saved.set(name, copyOf(state));
      return `fake-state:${name}`;
    },

    async loadState(reference) {
      open();
      const found = saved.get(reference.replace(/^fake-state:/, ''));
      if (found === undefined || !reference.startsWith('fake-state:')) throw new ClawrlError('not_found', `No saved training state ${reference}.`);
      state = copyOf(found);
      gradient = new Float64Array(size * size);
    },

    async resetWeights(artifact: PolicyArtifact) {
      open();
      const steps = state.steps;
      if (artifact.kind === 'base') {
        state = fresh(base.slice(), steps);
        return;
      }
      const bytes = artifact.files[weightsFile];
      if (bytes === undefined || bytes.byteLength !== size * size * 8) throw invalid(`artifact of version ${artifact.version} has no ${weightsFile} of this model's size`);
      const weights = new Float64Array(bytes.slice().buffer);
      state = fresh(artifact.kind === 'full' ? weights : weights.map((value, index) => value + (base[index] as number)), steps);
    },

    async close() {
      closed = true;
    },
  };
  return engine;
}
