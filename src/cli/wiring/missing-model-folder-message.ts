/**
 * What to tell a user whose `--model` names no model folder on disk. The usual causes differ in
 * what to do next: a typo in a path, a folder that is not a Hugging Face model folder, or a Hub id
 * (`Qwen/Qwen3-0.6B`), which clawrl never downloads: weights are the user's to fetch or to serve.
 */
import { statSync } from 'node:fs';
import path from 'node:path';

/** The files the local engine and the trainer read from a model folder. */
export const modelFolderFiles = 'config.json, tokenizer.json, tokenizer_config.json and model.safetensors or its shards';

/** `owner/name` as the Hugging Face Hub spells repository ids. */
const hubIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function kindOf(location: string): 'missing' | 'file' | 'directory' {
  try {
    return statSync(location).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/** One line naming the problem with `--model <model>` and what to pass instead. */
export function missingModelFolderMessage(model: string): string {
  const location = path.resolve(model);
  const kind = kindOf(location);
  if (kind === 'missing' && hubIdPattern.test(model)) {
    const folder = `./${model.split('/')[1]}`;
    return (
      `--model ${model} looks like a Hugging Face Hub id, and clawrl never downloads weights. Either download the model ` +
      `(\`huggingface-cli download ${model} --local-dir ${folder}\`) and pass --model ${folder}, or serve it with vLLM ` +
      `and pass --engine vllm --upstream <url> --model ${model}.`
    );
  }
  if (kind === 'missing') {
    return `--model ${model}: there is no folder at ${location}. Pass a local model folder (${modelFolderFiles}), or leave --model out to serve the built-in model.`;
  }
  if (kind === 'file') {
    return `--model ${model} is a file; it must be a model folder holding ${modelFolderFiles}.`;
  }
  return `--model ${model} is not a Hugging Face model folder: ${location} has no config.json (a model folder holds ${modelFolderFiles}).`;
}
