/**
 * Reads a Hugging Face model folder (what `huggingface-cli download` leaves on disk): config,
 * tokenizer files, chat template(s), generation config and the list of safetensors weight files.
 * Tensor data is not read here.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { type GenerationConfig, type ModelConfig, parseGenerationConfig, parseModelConfig } from './model-config.js';
import { type TokenizerConfig, parseTokenizerConfig } from './tokenizer-config.js';

export interface ModelFolder {
  /** Absolute path of the folder. */
  directory: string;
  config: ModelConfig;
  /** The parsed `tokenizer.json`, validated when the tokenizer is built. */
  tokenizerJson: unknown;
  tokenizerConfig: TokenizerConfig;
  /** The default chat template, or null for a base model that has none. */
  chatTemplate: string | null;
  /** The template transformers picks when tools are passed, if the model ships a separate one. */
  toolUseChatTemplate: string | null;
  generationConfig: GenerationConfig | null;
  /** Absolute paths: `model.safetensors`, or the shards named in `model.safetensors.index.json`. */
  weightFiles: string[];
}

export interface LoadModelFolderOptions {
  /** Fail when the folder has no safetensors weights; true by default (a tokenizer-only use passes false). */
  requireWeights?: boolean;
}

const weightIndexSchema = z.looseObject({
  weight_map: z.record(z.string(), z.string().min(1)),
});

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function readText(directory: string, file: string): Promise<string | null> {
  try {
    return await readFile(join(directory, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ClawrlError('configuration_error', `model folder ${directory}: cannot read ${file} (${String(error)})`, {
      cause: error,
    });
  }
}

function parseJson(directory: string, file: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ClawrlError('configuration_error', `model folder ${directory}: ${file} is not valid JSON (${String(error)})`, {
      cause: error,
    });
  }
}

/** Said with every missing file, so one message tells the whole set to fetch. */
const expectedFiles = 'a Hugging Face model folder holds config.json, tokenizer.json, tokenizer_config.json and model.safetensors or its shards';

async function readRequiredJson(directory: string, file: string): Promise<unknown> {
  const text = await readText(directory, file);
  if (text === null) {
    throw new ClawrlError('configuration_error', `model folder ${directory}: missing ${file} (${expectedFiles})`, { param: file });
  }
  return parseJson(directory, file, text);
}

async function readOptionalJson(directory: string, file: string): Promise<unknown> {
  const text = await readText(directory, file);
  return text === null ? undefined : parseJson(directory, file, text);
}

/** Prefixes a file's own validation error with the folder it came from. */
function withFolder<T>(directory: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (ClawrlError.isInstance(error)) {
      throw new ClawrlError(error.code, `model folder ${directory}: ${error.message}`, {
        cause: error,
        ...(error.param === undefined ? {} : { param: error.param }),
      });
    }
    throw error;
  }
}

async function findWeightFiles(directory: string, required: boolean): Promise<string[]> {
  const indexText = await readText(directory, 'model.safetensors.index.json');
  let names: string[];
  if (indexText !== null) {
    const parsed = weightIndexSchema.safeParse(parseJson(directory, 'model.safetensors.index.json', indexText));
    if (!parsed.success) {
      throw new ClawrlError(
        'configuration_error',
        `model folder ${directory}: model.safetensors.index.json has no valid weight_map`,
        { param: 'weight_map' },
      );
    }
    names = [...new Set(Object.values(parsed.data.weight_map))].sort();
  } else if (await exists(join(directory, 'model.safetensors'))) {
    names = ['model.safetensors'];
  } else {
    if (!required) return [];
    const legacy = await exists(join(directory, 'pytorch_model.bin'));
    throw new ClawrlError(
      'configuration_error',
      `model folder ${directory}: missing model.safetensors (or model.safetensors.index.json)` +
        (legacy ? '; pytorch_model.bin is not supported, convert it to safetensors' : ` (${expectedFiles})`),
      { param: 'model.safetensors' },
    );
  }
  const paths = names.map((name) => join(directory, name));
  const present = await Promise.all(paths.map(exists));
  const missing = names.filter((_name, index) => !present[index]);
  if (missing.length > 0) {
    throw new ClawrlError('configuration_error', `model folder ${directory}: missing weight shard ${missing.join(', ')}`, {
      param: missing[0],
    });
  }
  return paths;
}

/** Named templates saved as `additional_chat_templates/<name>.jinja` by recent transformers. */
async function readAdditionalTemplates(directory: string): Promise<Record<string, string>> {
  let files: string[];
  try {
    files = await readdir(join(directory, 'additional_chat_templates'));
  } catch {
    return {};
  }
  const templates: Record<string, string> = {};
  for (const file of files.filter((name) => name.endsWith('.jinja'))) {
    const text = await readText(join(directory, 'additional_chat_templates'), file);
    if (text !== null) templates[file.slice(0, -'.jinja'.length)] = text;
  }
  return templates;
}

/**
 * The folder's `generation_config.json`, or null when it has none: its eos list, and the sampling
 * defaults the model was published with (what vLLM serves a request that names none).
 */
export async function readGenerationConfig(directory: string): Promise<GenerationConfig | null> {
  const absolute = resolve(directory);
  const json = await readOptionalJson(absolute, 'generation_config.json');
  return json === undefined ? null : withFolder(absolute, () => parseGenerationConfig(json));
}

export async function loadModelFolder(directory: string, options: LoadModelFolderOptions = {}): Promise<ModelFolder> {
  const absolute = resolve(directory);
  let isDirectory = false;
  try {
    isDirectory = (await stat(absolute)).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new ClawrlError('configuration_error', `model folder ${absolute} does not exist or is not a directory`);
  }

  const [configJson, tokenizerJson, tokenizerConfigJson, generationConfig, jinjaTemplate, templateJson, additional, weightFiles] =
    await Promise.all([
      readRequiredJson(absolute, 'config.json'),
      readRequiredJson(absolute, 'tokenizer.json'),
      readRequiredJson(absolute, 'tokenizer_config.json'),
      readGenerationConfig(absolute),
      readText(absolute, 'chat_template.jinja'),
      readOptionalJson(absolute, 'chat_template.json'),
      readAdditionalTemplates(absolute),
      findWeightFiles(absolute, options.requireWeights ?? true),
    ]);

  const config = withFolder(absolute, () => parseModelConfig(configJson));
  const tokenizerConfig = withFolder(absolute, () => parseTokenizerConfig(tokenizerConfigJson));

  // transformers' order: chat_template.jinja, then chat_template.json (processors), then the config.
  const processorTemplate = z.object({ chat_template: z.string() }).safeParse(templateJson);
  const chatTemplate =
    jinjaTemplate ?? (processorTemplate.success ? processorTemplate.data.chat_template : null) ?? tokenizerConfig.chatTemplate;
  const toolUseChatTemplate = additional.tool_use ?? tokenizerConfig.namedChatTemplates.tool_use ?? null;

  return {
    directory: absolute,
    config,
    tokenizerJson,
    tokenizerConfig,
    chatTemplate,
    toolUseChatTemplate,
    generationConfig,
    weightFiles,
  };
}
