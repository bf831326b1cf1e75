/**
 * `clawrl pretrain-tiny [--out dir] [--resume] [--tiny] [--steps n] ...`: trains the built-in model
 * from scratch (or, with `--from`, continues from a model folder's weights) on the project's corpus
 * and writes a Hugging Face model folder. The defaults are
 * the recipe of the shipped `models/builtin-tiny` (docs/builtin-model.md); `--tiny` is a
 * seconds-long run of a toy shape, for tests and smoke checks.
 */
import { availableParallelism } from 'node:os';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { builtinArchitecture, tinyTestArchitecture } from '../../lab/pretrain/builtin-model-shape.js';
import { runPretraining, type PretrainingOptions, type PretrainingSummary } from '../../lab/pretrain/run-pretraining.js';

export interface PretrainTinyCommandOptions {
  out: string;
  resume: boolean;
  /** Continue from this model folder (e.g. models/builtin-tiny) on a fresh schedule instead of random weights. */
  from?: string;
  /** Toy shape and recipe (seconds), for tests. */
  tiny?: boolean;
  steps?: number;
  batchSize?: number;
  learningRate?: number;
  /** Worker threads; default min(2, cores). */
  workers?: number;
  seed?: number | string;
  /** `judge`: the judge-only corpus of builtin:tiny-judge (corpus/judge-corpus.ts); --judge-share and --hint-share do not apply. */
  corpus?: 'judge';
  /** Share of judge examples, 0–1 (default: the corpus default, 0.35). */
  judgeShare?: number;
  /** Decoder layers: of a new model, or with `from` the depth to grow the folder's model to. */
  layers?: number;
  /** Share of tutoring examples with a style hint, 0–1 (default: the corpus default, 0.5). */
  hintShare?: number;
  brokenReplyShare?: number;
  /** Share of tutoring examples asked inside an agent-shaped prompt, 0–1 (default 0). */
  agentPromptShare?: number;
  /** Stop after this many minutes of training and write the folder anyway. */
  maxMinutes?: number;
  checkpointMinutes?: number;
  /** Stop at this step with a checkpoint (resume later with `resume`). */
  stopAtStep?: number;
  /** Where the compiled worker is; by default next to this module's compiled twin. */
  workerUrl?: URL;
  log?: (line: string) => void;
}

export const defaultPretrainRecipe = {
  steps: 2000,
  batchSize: 12,
  learningRate: 2e-3,
  warmupSteps: 60,
  weightDecay: 0.01,
  tokenizerExamples: 6000,
  checkpointMinutes: 5,
} as const;

const tinyRecipe = {
  steps: 20,
  batchSize: 4,
  learningRate: 1e-2,
  warmupSteps: 2,
  weightDecay: 0,
  tokenizerExamples: 200,
  checkpointMinutes: 60,
} as const;

function positive(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new ClawrlError('configuration_error', `--${name} must be a positive number, got ${value}`);
  }
}

export function runPretrainTinyCommand(options: PretrainTinyCommandOptions): Promise<PretrainingSummary> {
  if (options.from !== undefined && options.resume) {
    throw new ClawrlError('configuration_error', '--from starts a new run and --resume continues one: give one of them');
  }
  for (const [name, value] of Object.entries({ steps: options.steps, 'batch-size': options.batchSize, 'learning-rate': options.learningRate, workers: options.workers, 'max-minutes': options.maxMinutes, 'checkpoint-minutes': options.checkpointMinutes })) {
    positive(name, value);
  }
  if (options.layers !== undefined && !(Number.isInteger(options.layers) && options.layers > 0)) {
    throw new ClawrlError('configuration_error', `--layers must be a positive whole number, got ${options.layers}`);
  }
  if (options.layers !== undefined && options.resume) {
    throw new ClawrlError('configuration_error', '--layers shapes a new run; a resumed run keeps its checkpoint\'s depth');
  }
  for (const [name, value] of Object.entries({ 'judge-share': options.judgeShare, 'hint-share': options.hintShare, 'broken-reply-share': options.brokenReplyShare, 'agent-prompt-share': options.agentPromptShare })) {
    if (value !== undefined && !(value >= 0 && value <= 1)) {
      throw new ClawrlError('configuration_error', `--${name} must be between 0 and 1, got ${value}`);
    }
  }
  if (options.corpus === 'judge' && (options.judgeShare !== undefined || options.hintShare !== undefined)) {
    throw new ClawrlError('configuration_error', '--corpus judge is all judge examples: --judge-share and --hint-share do not apply');
  }
  const recipe = options.tiny === true ? tinyRecipe : defaultPretrainRecipe;
  const pretraining: PretrainingOptions = {
    out: options.out,
    resume: options.resume,
    ...(options.from === undefined ? {} : { from: options.from }),
    architecture: { ...(options.tiny === true ? tinyTestArchitecture : builtinArchitecture), ...(options.layers === undefined ? {} : { layerCount: options.layers }) },
    ...(options.layers === undefined || options.from === undefined ? {} : { growToLayers: options.layers }),
    seed: options.seed ?? 1,
    ...(options.corpus === undefined ? {} : { corpus: options.corpus }),
    ...(options.judgeShare === undefined ? {} : { judgeShare: options.judgeShare }),
    ...(options.hintShare === undefined ? {} : { hintShare: options.hintShare }),
    ...(options.brokenReplyShare === undefined ? {} : { brokenReplyShare: options.brokenReplyShare }),
    ...(options.agentPromptShare === undefined ? {} : { agentPromptShare: options.agentPromptShare }),
    steps: options.steps ?? recipe.steps,
    batchSize: options.batchSize ?? recipe.batchSize,
    peakLearningRate: options.learningRate ?? recipe.learningRate,
    warmupSteps: Math.min(recipe.warmupSteps, Math.ceil((options.steps ?? recipe.steps) / 10)),
    weightDecay: recipe.weightDecay,
    workers: options.workers ?? Math.min(2, availableParallelism()),
    tokenizerExamples: recipe.tokenizerExamples,
    checkpointEverySeconds: (options.checkpointMinutes ?? recipe.checkpointMinutes) * 60,
    progressEverySteps: options.tiny === true ? 5 : 10,
    workerUrl: options.workerUrl ?? new URL('../../lab/pretrain/pretrain-worker.js', import.meta.url),
    log: options.log ?? ((line) => process.stderr.write(`pretrain-tiny: ${line}\n`)),
    ...(options.maxMinutes === undefined ? {} : { maxSeconds: options.maxMinutes * 60 }),
    ...(options.stopAtStep === undefined ? {} : { stopAtStep: options.stopAtStep }),
  };
  return runPretraining(pretraining);
}
