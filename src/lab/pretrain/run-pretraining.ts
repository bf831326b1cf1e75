/**
 * The built-in model's pretraining run: tokenizer, random initialization, data-parallel
 * full-parameter AdamW over the corpus's reply tokens, progress lines, checkpoints and resume, and
 * the final Hugging Face model folder in `out`.
 *
 * Example i of the training stream is `generateExample` seeded by (seed, 'corpus', 'train', i),
 * so resuming needs only the position, and a resumed run sees exactly the data an uninterrupted
 * one would have.
 */
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { createChatTemplate } from '../../model/chat-template.js';
import { chatmlTemplate } from '../../model/chatml-template.js';
import { createTokenizer } from '../../model/tokenizer.js';
import { parseTokenizerConfig } from '../../model/tokenizer-config.js';
import { transformerShapeFromHuggingFaceConfig } from '../../model/transformer-shape.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { buildBuiltinTokenizer } from './builtin-tokenizer.js';
import { generateExample, taskWeightsWithJudgeShare } from '../corpus/corpus-generator.js';
import { generateJudgeCorpusExample } from '../corpus/judge-corpus.js';
import type { ChatMessage } from '../../spec/chat.js';
import { builtinConfigJson, builtinGenerationConfigJson, initialWeights, type BuiltinArchitecture } from './builtin-model-shape.js';
import { expandLayers } from './expand-layers.js';
import { createGradientWorkerPool } from './gradient-worker-pool.js';
import type { ExportedTrainingState } from './gradient-worker-pool.js';
import { learningRateAt } from './learning-rate-schedule.js';
import { readCheckpoint, readModelFolder, writeCheckpoint, writeModelFolder } from './pretrain-checkpoint.js';
import type { CheckpointState, ModelFolderFiles } from './pretrain-checkpoint.js';
import { createSequenceEncoder } from './training-sequence.js';
import type { TrainingSequenceData } from './training-sequence.js';
import type { TensorMap } from './pretrain-worker-protocol.js';

export interface PretrainingOptions {
  out: string;
  /** Continue from `<out>/checkpoint` instead of starting over. */
  resume: boolean;
  /** Start from this model folder's weights and tokenizer (fresh optimizer, new schedule) instead of random weights. */
  from?: string;
  architecture: BuiltinArchitecture;
  seed: number | string;
  steps: number;
  /** Examples per optimizer step. */
  batchSize: number;
  peakLearningRate: number;
  warmupSteps: number;
  weightDecay: number;
  /**
   * Share of judge examples in the stream (the rest keep their default proportions); the corpus
   * default when absent. A `--from` stage that teaches the judge something new raises it.
   */
  judgeShare?: number;
  /** With `from`: grow the folder's model to this many decoder layers by block expansion first. */
  growToLayers?: number;
  /** Share of tutoring examples with a style hint; the corpus default (0.5) when absent. */
  hintShare?: number;
  /** `judge`: train on the judge-only corpus of builtin:tiny-judge instead of the shared one. */
  corpus?: 'judge';
  brokenReplyShare?: number;
  /** Share of tutoring examples asked inside an agent-shaped prompt (corpus/agent-prompts.ts); none when absent. */
  agentPromptShare?: number;
  /** Data-parallel worker threads (one per core). */
  workers: number;
  tokenizerExamples: number;
  checkpointEverySeconds: number;
  progressEverySteps: number;
  /** Stop after this much training time (the final folder is still written); none by default. */
  maxSeconds?: number;
  /** Stop (checkpointed, resumable) once this step is reached, e.g. to split a run in parts. */
  stopAtStep?: number;
  workerUrl: URL;
  log: (line: string) => void;
}

export interface PretrainingSummary {
  steps: number;
  tokensSeen: number;
  seconds: number;
  /** Mean reply-token loss per step, in order, for the steps this invocation ran. */
  losses: number[];
}

function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  return hours > 0 ? `${hours}h${String(minutes).padStart(2, '0')}m` : `${minutes}m${String(rest).padStart(2, '0')}s`;
}

function modelFiles(architecture: BuiltinArchitecture, tokenizerFiles: { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> }): ModelFolderFiles {
  const tokenizer = createTokenizer({ tokenizerJson: tokenizerFiles.tokenizerJson, tokenizerConfig: parseTokenizerConfig(tokenizerFiles.tokenizerConfig) });
  const { endOfText, imEnd } = tokenizer.specialTokenIds;
  if (endOfText === null || imEnd === null) throw new ClawrlError('internal_error', 'the trained tokenizer lacks its special tokens');
  if (tokenizer.vocabularySize > architecture.vocabularySize) {
    throw new ClawrlError('internal_error', `tokenizer has ${tokenizer.vocabularySize} tokens, the model only ${architecture.vocabularySize}`);
  }
  return {
    configJson: builtinConfigJson(architecture, { endOfText, imEnd }),
    generationConfigJson: builtinGenerationConfigJson({ endOfText, imEnd }),
    ...tokenizerFiles,
  };
}

/** The recipe's corpus example at `index` (the training split, the recipe's corpus, task and hint mix). */
function exampleAt(recipe: CheckpointState['recipe'], index: number): { messages: ChatMessage[] } {
  const random = createSeededRandom(deriveSeed(recipe.seed, 'corpus', 'train', index));
  if (recipe.corpus === 'judge') {
    return generateJudgeCorpusExample(random, { split: 'train', ...(recipe.brokenReplyShare === undefined ? {} : { brokenReplyShare: recipe.brokenReplyShare }) });
  }
  return generateExample(random, {
    split: 'train',
    ...(recipe.judgeShare === undefined ? {} : { taskWeights: taskWeightsWithJudgeShare(recipe.judgeShare) }),
    ...(recipe.hintShare === undefined ? {} : { hintProbability: recipe.hintShare }),
    ...(recipe.brokenReplyShare === undefined ? {} : { brokenReplyShare: recipe.brokenReplyShare }),
    ...(recipe.agentPromptShare === undefined ? {} : { agentPromptShare: recipe.agentPromptShare }),
  });
}

/** Examples the fingerprint hashes: enough that any change to a task type's text shows. */
const fingerprintExamples = 256;

/**
 * Names the corpus a recipe trains on: a SHA-256 of its first examples. A `--from` stage or a
 * resumed run is reproducible only with the same generator, and the source's commit is not known
 * at run time; this is, and it is written to the checkpoint and to the model folder.
 */
export function corpusFingerprint(recipe: CheckpointState['recipe']): string {
  const hash = createHash('sha256');
  for (let index = 0; index < fingerprintExamples; index += 1) hash.update(JSON.stringify(exampleAt(recipe, index).messages));
  return hash.digest('hex').slice(0, 16);
}

export async function runPretraining(options: PretrainingOptions): Promise<PretrainingSummary> {
  const { log } = options;
  let files: ModelFolderFiles;
  let training: ExportedTrainingState | null = null;
  let state: CheckpointState;
  let startingWeights: TensorMap | null = null;
  if (options.resume) {
    const checkpoint = await readCheckpoint(options.out);
    files = checkpoint.files;
    training = checkpoint.training;
    state = checkpoint.state;
    log(`resuming at step ${state.step}/${state.totalSteps} (${(state.tokensSeen / 1e6).toFixed(2)}M tokens seen)`);
    const fingerprint = corpusFingerprint(state.recipe);
    if (state.recipe.corpusFingerprint !== undefined && state.recipe.corpusFingerprint !== fingerprint) {
      throw new ClawrlError(
        'configuration_error',
        `the corpus generator changed since this checkpoint was written (corpus ${state.recipe.corpusFingerprint}, now ${fingerprint}): resuming would train on a different corpus. Build the checkpoint's version, or delete ${join(options.out, 'checkpoint')} to start over.`,
      );
    }
    state.recipe.corpusFingerprint = fingerprint;
  } else {
    if (options.from === undefined) {
      const started = Date.now();
      files = modelFiles(options.architecture, buildBuiltinTokenizer({
        seed: options.seed,
        exampleCount: options.tokenizerExamples,
        vocabularySize: options.architecture.vocabularySize,
      }));
      log(`tokenizer trained on ${options.tokenizerExamples} transcripts in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    } else {
      const folder = await readModelFolder(options.from);
      files = folder.files;
      startingWeights = folder.weights;
      log(`starting from the weights and tokenizer of ${options.from}`);
      const fromLayers = transformerShapeFromHuggingFaceConfig(folder.files.configJson).layerCount;
      if (options.growToLayers !== undefined && options.growToLayers !== fromLayers) {
        startingWeights = expandLayers(folder.weights, fromLayers, options.growToLayers);
        files = { ...folder.files, configJson: { ...folder.files.configJson, num_hidden_layers: options.growToLayers } };
        log(`grown from ${fromLayers} to ${options.growToLayers} layers (new layers start as zeroed copies, so the outputs are unchanged)`);
      }
    }
    state = {
      step: 0,
      examplePosition: 0,
      totalSteps: options.steps,
      tokensSeen: 0,
      elapsedSeconds: 0,
      lastLoss: null,
      recipe: {
        seed: options.seed,
        batchSize: options.batchSize,
        peakLearningRate: options.peakLearningRate,
        warmupSteps: options.warmupSteps,
        weightDecay: options.weightDecay,
        ...(options.from === undefined ? {} : { from: options.from }),
        ...(options.corpus === undefined ? {} : { corpus: options.corpus }),
        ...(options.judgeShare === undefined ? {} : { judgeShare: options.judgeShare }),
        ...(options.hintShare === undefined ? {} : { hintShare: options.hintShare }),
        ...(options.brokenReplyShare === undefined ? {} : { brokenReplyShare: options.brokenReplyShare }),
        ...(options.agentPromptShare === undefined ? {} : { agentPromptShare: options.agentPromptShare }),
      },
    };
    state.recipe.corpusFingerprint = corpusFingerprint(state.recipe);
    await rm(join(options.out, 'checkpoint'), { recursive: true, force: true });
  }
  const tokenizer = createTokenizer({ tokenizerJson: files.tokenizerJson, tokenizerConfig: parseTokenizerConfig(files.tokenizerConfig) });
  const encoder = createSequenceEncoder(createChatTemplate({ source: chatmlTemplate }), tokenizer);
  const shape = transformerShapeFromHuggingFaceConfig(files.configJson);
  const totalSteps = state.totalSteps;
  const { recipe } = state;
  const pool = await createGradientWorkerPool({
    size: options.workers,
    workerUrl: options.workerUrl,
    data: {
      configJson: files.configJson,
      weights: training?.weights ?? startingWeights ?? initialWeights(shape, deriveSeed(recipe.seed, 'initial-weights')),
      optimizerState: training?.optimizerState ?? null,
      weightDecay: recipe.weightDecay,
      maxGradientNorm: 1,
    },
  });
  log(`model: ${shape.layerCount} layers, d ${shape.hiddenSize}, vocab ${shape.vocabSize}; ${pool.size} worker(s); ${totalSteps} steps of ${recipe.batchSize} examples; corpus ${recipe.corpusFingerprint ?? '?'}`);

  // Batches are prepared while the workers compute the previous step; `examplePosition` in the
  // state only advances when a batch has been trained, so a checkpoint never skips data.
  let readPosition = state.examplePosition;
  const nextBatch = (): { sequences: TrainingSequenceData[]; endPosition: number } => {
    const sequences: TrainingSequenceData[] = [];
    while (sequences.length < recipe.batchSize) {
      const example = exampleAt(recipe, readPosition);
      readPosition += 1;
      const sequence = encoder.encode(example.messages);
      if (sequence.tokenIds.length <= shape.maxPositionEmbeddings) sequences.push(sequence);
    }
    return { sequences, endPosition: readPosition };
  };

  const losses: number[] = [];
  const runStarted = Date.now();
  const elapsedBefore = state.elapsedSeconds;
  let lastCheckpoint = Date.now();
  let windowStarted = Date.now();
  let windowTokens = 0;
  let windowLoss = 0;
  let windowSteps = 0;
  const saveCheckpoint = async (): Promise<void> => {
    state.elapsedSeconds = elapsedBefore + (Date.now() - runStarted) / 1000;
    await writeCheckpoint(options.out, files, await pool.exportState(), state);
    lastCheckpoint = Date.now();
  };
  try {
    let batch = nextBatch();
    while (state.step < totalSteps) {
      if (options.maxSeconds !== undefined && (Date.now() - runStarted) / 1000 >= options.maxSeconds) {
        log(`time budget reached at step ${state.step}`);
        break;
      }
      if (options.stopAtStep !== undefined && state.step >= options.stopAtStep) {
        log(`stopping at step ${state.step} as asked`);
        break;
      }
      const learningRate = learningRateAt(state.step, { peak: recipe.peakLearningRate, warmupSteps: recipe.warmupSteps, totalSteps });
      const pendingStep = pool.trainStep(batch.sequences, learningRate);
      const trained = batch;
      batch = nextBatch();
      const result = await pendingStep;
      state.examplePosition = trained.endPosition;
      if (!Number.isFinite(result.loss)) throw new ClawrlError('internal_error', `loss became ${result.loss} at step ${state.step}`);
      state.step += 1;
      state.tokensSeen += result.tokens;
      state.lastLoss = result.loss;
      losses.push(result.loss);
      windowTokens += result.tokens;
      windowLoss += result.loss;
      windowSteps += 1;
      if (windowSteps >= options.progressEverySteps || state.step === totalSteps) {
        const seconds = (Date.now() - windowStarted) / 1000;
        // The whole invocation's pace: a single window swings with the batch mix and other load.
        const secondsPerStep = (Date.now() - runStarted) / 1000 / losses.length;
        const elapsed = elapsedBefore + (Date.now() - runStarted) / 1000;
        log(
          `step ${state.step}/${totalSteps}  loss ${(windowLoss / windowSteps).toFixed(4)}  lr ${learningRate.toExponential(2)}  ` +
            `${Math.round(windowTokens / seconds)} tok/s  ${(state.tokensSeen / 1e6).toFixed(2)}M tokens  ` +
            `elapsed ${formatDuration(elapsed)}  left ${formatDuration(secondsPerStep * (totalSteps - state.step))}`,
        );
        windowStarted = Date.now();
        windowTokens = 0;
        windowLoss = 0;
        windowSteps = 0;
      }
      if ((Date.now() - lastCheckpoint) / 1000 >= options.checkpointEverySeconds && state.step < totalSteps) {
        await saveCheckpoint();
        log(`checkpoint at step ${state.step} in ${options.out}/checkpoint`);
      }
    }
    await saveCheckpoint();
    const final = await pool.exportState();
    await writeModelFolder(options.out, files, final.weights);
    // What made these weights, beside them: a `--from` stage's recipe names its corpus this way.
    await writeFile(join(options.out, 'pretrain-recipe.json'), `${JSON.stringify({ recipe, steps: state.step, tokensSeen: state.tokensSeen }, null, 2)}\n`);
    log(`model folder written to ${options.out} (step ${state.step}, ${(state.tokensSeen / 1e6).toFixed(2)}M tokens, ${formatDuration(state.elapsedSeconds)})`);
  } finally {
    await pool.close();
  }
  return { steps: state.step, tokensSeen: state.tokensSeen, seconds: state.elapsedSeconds, losses };
}
