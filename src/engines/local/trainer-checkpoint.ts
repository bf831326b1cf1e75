/**
 * Saved training state of the local trainer on disk: one folder per saved name holding the
 * weights (a PEFT adapter or `model.safetensors`), the AdamW moments (`optimizer.safetensors`) and
 * `trainer-state.json`. A folder is written under a temporary name and renamed into place, so a
 * kill -9 mid-save leaves either the previous state or the new one, never half of one.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AdamWState } from '../../model/adamw.js';
import { readSafetensors, writeSafetensors, type FloatTensorData } from '../../model/safetensors.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { lineageStatePrefix } from '../training-lineages.js';

export interface TrainerCheckpoint {
  trainParams: 'lora' | 'full';
  /** Weight files by name. */
  weights: Record<string, Uint8Array>;
  optimizer: AdamWState;
}

const namePattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const stateFile = 'trainer-state.json';
const optimizerFile = 'optimizer.safetensors';

function folderOf(directory: string, name: string): string {
  if (!namePattern.test(name)) throw new ClawrlError('invalid_request', `invalid checkpoint name '${name}'`);
  return path.join(directory, name);
}

export function writeTrainerCheckpoint(directory: string, name: string, checkpoint: TrainerCheckpoint, retained: number): string {
  const target = folderOf(directory, name);
  const temporary = path.join(directory, `.${name}.partial`);
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  for (const [file, bytes] of Object.entries(checkpoint.weights)) writeFileSync(path.join(temporary, file), bytes);
  const moments = new Map<string, FloatTensorData>();
  for (const [parameter, { first, second }] of checkpoint.optimizer.moments) {
    moments.set(`${parameter}.first`, first);
    moments.set(`${parameter}.second`, second);
  }
  writeFileSync(path.join(temporary, optimizerFile), writeSafetensors(moments));
  const state = { trainParams: checkpoint.trainParams, stepCount: checkpoint.optimizer.stepCount, weightFiles: Object.keys(checkpoint.weights) };
  writeFileSync(path.join(temporary, stateFile), JSON.stringify(state));
  rmSync(target, { recursive: true, force: true });
  renameSync(temporary, target);
  pruneCheckpoints(directory, retained, name);
  return name;
}

export function readTrainerCheckpoint(directory: string, reference: string): TrainerCheckpoint {
  const folder = folderOf(directory, reference);
  if (!existsSync(path.join(folder, stateFile))) throw new ClawrlError('not_found', `no saved training state '${reference}' in ${directory}`);
  const state = JSON.parse(readFileSync(path.join(folder, stateFile), 'utf8')) as { trainParams: 'lora' | 'full'; stepCount: number; weightFiles: string[] };
  const weights: Record<string, Uint8Array> = {};
  for (const file of state.weightFiles) weights[file] = new Uint8Array(readFileSync(path.join(folder, file)));
  const moments: AdamWState['moments'] = new Map();
  const tensors = readSafetensors(new Uint8Array(readFileSync(path.join(folder, optimizerFile)))).tensors;
  for (const [tensorName, first] of tensors) {
    if (!tensorName.endsWith('.first')) continue;
    const parameter = tensorName.slice(0, -'.first'.length);
    const second = tensors.get(`${parameter}.second`);
    if (second === undefined) throw new ClawrlError('internal_error', `checkpoint '${reference}': no second moment of ${parameter}`);
    moments.set(parameter, { first, second });
  }
  return { trainParams: state.trainParams, weights, optimizer: { stepCount: state.stepCount, moments } };
}

/**
 * Keeps the `retained` newest checkpoints (and always `keep`). A lineage's state (what a lineage
 * swapped off the worker left, `../training-lineages.ts`) is its only copy, replaced by its
 * next save: it is never pruned.
 */
function pruneCheckpoints(directory: string, retained: number, keep: string): void {
  const folders = readdirSync(directory)
    .filter((entry) => !entry.startsWith('.') && !entry.startsWith(lineageStatePrefix) && existsSync(path.join(directory, entry, stateFile)))
    .map((entry) => ({ entry, modified: statSync(path.join(directory, entry)).mtimeMs }))
    .sort((left, right) => right.modified - left.modified);
  for (const { entry } of folders.slice(retained)) if (entry !== keep) rmSync(path.join(directory, entry), { recursive: true, force: true });
}
