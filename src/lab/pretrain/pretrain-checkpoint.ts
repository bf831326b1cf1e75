/**
 * Checkpoints of a pretraining run: `<out>/checkpoint/` is a complete Hugging Face model folder
 * (so it can be served or measured while the run goes on) plus `optimizer.safetensors` (AdamW
 * moments as `first.<name>` / `second.<name>`) and `state.json` (step and data position). It is
 * written to a sibling folder first and renamed, so a kill mid-write leaves the previous one.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { readSafetensors, writeSafetensors } from '../../model/safetensors.js';
import type { SafetensorsWriteDtype } from '../../model/safetensors.js';
import type { ExportedTrainingState } from './gradient-worker-pool.js';
import type { TensorMap } from './pretrain-worker-protocol.js';

export const checkpointStateSchema = z.object({
  step: z.number().int().nonnegative(),
  /** Index of the next corpus example to train on. */
  examplePosition: z.number().int().nonnegative(),
  totalSteps: z.number().int().positive(),
  tokensSeen: z.number().nonnegative(),
  elapsedSeconds: z.number().nonnegative(),
  lastLoss: z.number().nullable(),
  /** The run's recipe: a resumed run keeps it, whatever the new invocation's flags say. */
  recipe: z.object({
    seed: z.union([z.number(), z.string()]),
    batchSize: z.number().int().positive(),
    peakLearningRate: z.number().positive(),
    warmupSteps: z.number().int().nonnegative(),
    weightDecay: z.number().nonnegative(),
    /** The model folder the run started from; absent for a run from random weights. */
    from: z.string().optional(),
    /**
     * Which corpus the stream draws from: absent is the shared corpus (tutoring and judge tasks);
     * `judge` the judge-only corpus of builtin:tiny-judge (corpus/judge-corpus.ts).
     */
    corpus: z.enum(['judge']).optional(),
    /** Share of judge examples in the stream; absent means the corpus default. */
    judgeShare: z.number().min(0).max(1).optional(),
    /** Share of tutoring examples with a style hint; absent means the corpus default. */
    hintShare: z.number().min(0).max(1).optional(),
    /** Share of judge examples on broken replies; absent means none (the corpus default). */
    brokenReplyShare: z.number().min(0).max(1).optional(),
    /** Share of tutoring examples in agent-shaped prompts; absent means none (the corpus default). */
    agentPromptShare: z.number().min(0).max(1).optional(),
    /**
     * A hash of the recipe's first corpus examples (`corpusFingerprint`): it changes when the
     * corpus generator does, which a resumed run must not mix in. Absent in older checkpoints.
     */
    corpusFingerprint: z.string().optional(),
  }),
});

export type CheckpointState = z.infer<typeof checkpointStateSchema>;

export interface ModelFolderFiles {
  configJson: Record<string, unknown>;
  generationConfigJson: Record<string, unknown>;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

/** Writes a loadable HF model folder: configs, tokenizer files and `model.safetensors`. */
export async function writeModelFolder(
  directory: string,
  files: ModelFolderFiles,
  weights: TensorMap,
  dtype: SafetensorsWriteDtype = 'F32',
): Promise<void> {
  await mkdir(directory, { recursive: true });
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  await writeFile(join(directory, 'config.json'), json(files.configJson));
  await writeFile(join(directory, 'generation_config.json'), json(files.generationConfigJson));
  await writeFile(join(directory, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  await writeFile(join(directory, 'tokenizer_config.json'), json(files.tokenizerConfig));
  await writeFile(join(directory, 'model.safetensors'), writeSafetensors(weights, { dtype }));
}

export async function writeCheckpoint(
  out: string,
  files: ModelFolderFiles,
  training: ExportedTrainingState,
  state: CheckpointState,
): Promise<void> {
  const target = join(out, 'checkpoint');
  const staging = join(out, 'checkpoint.writing');
  await rm(staging, { recursive: true, force: true });
  await writeModelFolder(staging, files, training.weights);
  const moments: TensorMap = new Map();
  for (const [name, tensor] of training.optimizerState.first) moments.set(`first.${name}`, tensor);
  for (const [name, tensor] of training.optimizerState.second) moments.set(`second.${name}`, tensor);
  await writeFile(
    join(staging, 'optimizer.safetensors'),
    writeSafetensors(moments, { metadata: { stepCount: String(training.optimizerState.stepCount) } }),
  );
  await writeFile(join(staging, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  await rm(join(out, 'checkpoint.previous'), { recursive: true, force: true });
  await rename(target, join(out, 'checkpoint.previous')).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(staging, target);
  await rm(join(out, 'checkpoint.previous'), { recursive: true, force: true });
}

export interface LoadedCheckpoint {
  files: ModelFolderFiles;
  training: ExportedTrainingState;
  state: CheckpointState;
}

function jsonReader(directory: string, purpose: string): (file: string) => Promise<Record<string, unknown>> {
  return async (file) => {
    try {
      return JSON.parse(await readFile(join(directory, file), 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new ClawrlError('configuration_error', `cannot ${purpose}: ${directory}/${file} is missing or unreadable`, { cause: error });
    }
  };
}

async function readFolderFiles(readJson: (file: string) => Promise<Record<string, unknown>>): Promise<ModelFolderFiles> {
  return {
    configJson: await readJson('config.json'),
    generationConfigJson: await readJson('generation_config.json'),
    tokenizerJson: await readJson('tokenizer.json'),
    tokenizerConfig: await readJson('tokenizer_config.json'),
  };
}

/** A model folder written by `writeModelFolder` (or shipped), to continue training from its weights. */
export async function readModelFolder(directory: string): Promise<{ files: ModelFolderFiles; weights: TensorMap }> {
  const files = await readFolderFiles(jsonReader(directory, 'start from the model folder'));
  const bytes = await readFile(join(directory, 'model.safetensors')).catch((error: unknown) => {
    throw new ClawrlError('configuration_error', `cannot start from the model folder: ${directory}/model.safetensors is missing or unreadable`, { cause: error });
  });
  return { files, weights: readSafetensors(bytes).tensors };
}

export async function readCheckpoint(out: string): Promise<LoadedCheckpoint> {
  const directory = join(out, 'checkpoint');
  const readJson = jsonReader(directory, 'resume');
  const state = checkpointStateSchema.parse(await readJson('state.json'));
  const files = await readFolderFiles(readJson);
  const weights = readSafetensors(await readFile(join(directory, 'model.safetensors'))).tensors;
  const optimizer = readSafetensors(await readFile(join(directory, 'optimizer.safetensors')));
  const first: TensorMap = new Map();
  const second: TensorMap = new Map();
  for (const [name, tensor] of optimizer.tensors) {
    if (name.startsWith('first.')) first.set(name.slice('first.'.length), tensor);
    else if (name.startsWith('second.')) second.set(name.slice('second.'.length), tensor);
  }
  const stepCount = Number(optimizer.metadata.stepCount ?? state.step);
  return { files, training: { weights, optimizerState: { stepCount, first, second } }, state };
}
