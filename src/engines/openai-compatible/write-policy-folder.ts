/**
 * A policy version as a folder the inference server reads: a PEFT adapter (LoRA versions) or a
 * Hugging Face model folder (full-weight versions on SGLang). The folder name is unique per
 * content (`<model>-v<N>-<hash>`), so several processes serving from one server (a gateway and
 * its judge) write and load the same name, and a store started afresh never meets a stale
 * adapter of an earlier run under its own name. Folders are written under a temporary name and
 * renamed into place, so a server never reads half a file.
 */
import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';

const safeFileName = /^[A-Za-z0-9._-]+$/;

/** The model folder's files a full-weight folder needs beside its weights (config and tokenizer). */
export const modelFolderCompanions = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'vocab.json',
  'merges.txt',
  'tokenizer.model',
  'chat_template.jinja',
];

/**
 * PEFT's `base_model_name_or_path` set to the model the server serves: the trainer names the
 * model as clawrl serves it, which need not be the upstream's name.
 */
export function withBaseModelName(files: Record<string, Uint8Array>, baseModel: string): Record<string, Uint8Array> {
  const config = files['adapter_config.json'];
  if (config === undefined) return files;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(config));
  } catch (error) {
    throw new ClawrlError('invalid_request', 'the policy version\'s adapter_config.json is not JSON', { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ClawrlError('invalid_request', 'the policy version\'s adapter_config.json is not a JSON object');
  }
  const named = { ...(parsed as Record<string, unknown>), base_model_name_or_path: baseModel };
  return { ...files, 'adapter_config.json': new TextEncoder().encode(`${JSON.stringify(named, null, 2)}\n`) };
}

/** `<model>-v<N>-<hash>`: the model's last path segment, safe as a file name and as a model name. */
export function policyFolderName(model: string, version: PolicyVersion, files: Record<string, Uint8Array>): string {
  const hash = createHash('sha256');
  for (const name of Object.keys(files).sort()) {
    hash.update(name);
    hash.update('\0');
    hash.update(files[name] ?? new Uint8Array(0));
  }
  const stem = basename(model.replace(/\/+$/, '')).replace(/[^A-Za-z0-9._-]/g, '-') || 'model';
  return `${stem}-v${version}-${hash.digest('hex').slice(0, 10)}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes `files` (and copies `companions` from `modelDirectory`, when given) to
 * `<root>/<name>/` unless that folder exists already; returns its path.
 */
export async function writePolicyFolder(
  root: string,
  name: string,
  files: Record<string, Uint8Array>,
  copyFrom?: { modelDirectory: string; companions: readonly string[] },
): Promise<string> {
  for (const fileName of Object.keys(files)) {
    if (!safeFileName.test(fileName)) throw new ClawrlError('invalid_request', `unsafe policy file name ${JSON.stringify(fileName)}`);
  }
  const target = join(root, name);
  // Same name, same content: another process (or an earlier run) wrote it already.
  if (await exists(target)) return target;
  const temporary = join(root, `.${name}.${randomUUID()}.partial`);
  await mkdir(temporary, { recursive: true });
  try {
    await Promise.all(Object.entries(files).map(([fileName, bytes]) => writeFile(join(temporary, fileName), bytes)));
    if (copyFrom !== undefined) {
      for (const companion of copyFrom.companions) {
        if (companion in files) continue;
        const source = join(copyFrom.modelDirectory, companion);
        if (await exists(source)) await copyFile(source, join(temporary, companion));
      }
    }
    try {
      await rename(temporary, target);
    } catch (error) {
      // Another writer won the race with the same content.
      if (!(await exists(target))) throw error;
    }
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
  return target;
}
