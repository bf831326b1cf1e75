/**
 * The one configuration schema. Each option has a flag, a `CLAWRL_*` environment variable, a
 * config-file key and a default; `resolveConfiguration` applies flag > config file > environment
 * > default and reports errors naming the option and its variable. Nothing outside `src/cli`
 * reads the environment or config files.
 */
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { defaultAnchorTopK } from '../core/policy-loss.js';

/** How a value arrives from a flag or the environment (always text) before the schema coerces it. */
type OptionKind = 'string' | 'integer' | 'number' | 'boolean' | 'list';

export interface OptionSpecification {
  /** camelCase key in the config file and the resolved configuration. */
  key: string;
  /** Flag as commander declares it. */
  flag: string;
  description: string;
  kind: OptionKind;
  schema: z.ZodType;
  defaultValue?: unknown;
}

function environmentName(flag: string): string {
  const name = /--([a-z0-9-]+)/.exec(flag)?.[1] ?? flag;
  return `CLAWRL_${name.replaceAll('-', '_').toUpperCase()}`;
}

const port = z.number().int().min(0).max(65535);
const positive = z.number().int().positive();

/** Every option of every command. Commands pick the ones they use by key. */
export const optionSpecifications = [
  { key: 'host', flag: '--host <host>', description: 'address to bind', kind: 'string', schema: z.string().min(1), defaultValue: '127.0.0.1' },
  { key: 'port', flag: '--port <number>', description: 'port to listen on (0 picks a free one)', kind: 'integer', schema: port, defaultValue: 8400 },
  { key: 'data', flag: '--data <dir>', description: 'data directory (SQLite store, checkpoints)', kind: 'string', schema: z.string().min(1), defaultValue: './.clawrl' },
  { key: 'model', flag: '--model <model>', description: 'builtin:tiny, a Hugging Face model folder, or the upstream model name', kind: 'string', schema: z.string().min(1), defaultValue: 'builtin:tiny' },
  { key: 'servedModel', flag: '--served-model <name>', description: 'model name clients use (default: --model, or the folder name)', kind: 'string', schema: z.string().min(1) },
  { key: 'engine', flag: '--engine <engine>', description: 'local | openai | vllm | sglang | llamacpp', kind: 'string', schema: z.enum(['local', 'openai', 'vllm', 'sglang', 'llamacpp']), defaultValue: 'local' },
  { key: 'upstream', flag: '--upstream <url>', description: 'base URL of a remote engine (e.g. http://127.0.0.1:8000)', kind: 'string', schema: z.url() },
  { key: 'upstreamModel', flag: '--upstream-model <name>', description: 'model name on the upstream (default: --model)', kind: 'string', schema: z.string().min(1) },
  { key: 'upstreamApiKey', flag: '--upstream-api-key <key>', description: 'API key sent to the upstream', kind: 'string', schema: z.string().min(1) },
  { key: 'upstreamTimeout', flag: '--upstream-timeout <ms>', description: 'time-out for the upstream to start and to keep streaming', kind: 'integer', schema: positive, defaultValue: 120_000 },
  { key: 'judge', flag: '--judge <judge>', description: 'rules | policy | openai', kind: 'string', schema: z.enum(['rules', 'policy', 'openai']), defaultValue: 'policy' },
  { key: 'judgeUrl', flag: '--judge-url <url>', description: 'OpenAI-compatible judge endpoint', kind: 'string', schema: z.url() },
  { key: 'judgeModel', flag: '--judge-model <name>', description: 'judge model name', kind: 'string', schema: z.string().min(1) },
  { key: 'judgeRules', flag: '--judge-rules <spec>', description: "what --judge rules judges by: a rules-judge spec file (JSON), or user:<student|ta|teacher|user.json> for that simulated user's own rules and hint (an oracle, for ablations) (default: the built-in next-state predicates)", kind: 'string', schema: z.string().min(1) },
  { key: 'judgeHintGrounding', flag: '--judge-hint-grounding', description: "the PRM judge keeps a hint sentence about a style only when the user's message mentions that style (docs/judging.md)", kind: 'boolean', schema: z.boolean(), defaultValue: false },
  { key: 'judgeWeights', flag: '--judge-weights <weights>', description: 'base | served: what --judge policy judges with (base: the frozen base weights, as a separate PRM)', kind: 'string', schema: z.enum(['base', 'served']), defaultValue: 'base' },
  { key: 'method', flag: '--method <method>', description: 'rl | opd | combine', kind: 'string', schema: z.enum(['rl', 'opd', 'combine']), defaultValue: 'combine' },
  { key: 'rlWeight', flag: '--rl-weight <w>', description: 'combine: weight of the judge\'s reward r in A = w_rl·r + w_opd·Δ', kind: 'number', schema: z.number().min(0), defaultValue: 1 },
  { key: 'opdWeight', flag: '--opd-weight <w>', description: 'combine: weight of the hint-conditioned teacher\'s gap Δ in A = w_rl·r + w_opd·Δ', kind: 'number', schema: z.number().min(0), defaultValue: 1 },
  { key: 'opdSupportK', flag: '--opd-support-k <k>', description: "opd/combine: distil over the student's k likeliest tokens at each position (OpenClaw-RL v2's support set), 0: the sampled token only", kind: 'integer', schema: z.number().int().min(0).max(20), defaultValue: 0 },
  { key: 'store', flag: '--store <store>', description: 'sqlite | postgres', kind: 'string', schema: z.enum(['sqlite', 'postgres']), defaultValue: 'sqlite' },
  { key: 'storeUrl', flag: '--store-url <url>', description: 'Postgres connection URL', kind: 'string', schema: z.string().min(1) },
  { key: 'bus', flag: '--bus <bus>', description: 'memory | nats', kind: 'string', schema: z.enum(['memory', 'nats']), defaultValue: 'memory' },
  { key: 'busUrl', flag: '--bus-url <url>', description: 'NATS server URL (comma-separated for a cluster)', kind: 'string', schema: z.string().min(1) },
  { key: 'busPrefix', flag: '--bus-prefix <name>', description: 'JetStream stream and subject prefix of this deployment, so several share one NATS', kind: 'string', schema: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ and -, at most 32'), defaultValue: 'clawrl' },
  { key: 'instance', flag: '--instance <name>', description: "this process's name in a distributed deployment: names its durable bus consumer (default: host name, and port for gateways; stable across restarts)", kind: 'string', schema: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and -, at most 40') },
  { key: 'trainEvery', flag: '--train-every <samples>', description: 'ready samples per training step', kind: 'integer', schema: positive, defaultValue: 16 },
  { key: 'trainEpochs', flag: '--train-epochs <passes>', description: "passes over each training batch, each an optimizer step, before one version is published; later passes clip against the first pass's log-probs (OpenClaw-RL's TRAIN_EPOCHS)", kind: 'integer', schema: positive, defaultValue: 1 },
  { key: 'noTrain', flag: '--no-train', description: 'serve and record without training', kind: 'boolean', schema: z.boolean(), defaultValue: false },
  { key: 'trainParams', flag: '--train-params <params>', description: 'lora | full: train LoRA adapters, or every weight (better for small models; publishes full weights)', kind: 'string', schema: z.enum(['lora', 'full']), defaultValue: 'lora' },
  { key: 'maxStaleness', flag: '--max-staleness <versions>', description: 'drop (and count) samples more policy versions old than this', kind: 'integer', schema: z.number().int().min(0), defaultValue: 2 },
  { key: 'learningRate', flag: '--learning-rate <lr>', description: 'AdamW learning rate (default: 1e-4 LoRA / 1e-5 full; builtin:tiny 1e-2 / 1e-3)', kind: 'number', schema: z.number().positive() },
  { key: 'learningRateHalfLife', flag: '--learning-rate-half-life <steps>', description: 'halve the learning rate every this many optimizer steps (default: constant)', kind: 'number', schema: z.number().positive() },
  { key: 'adamBeta1', flag: '--adam-beta1 <beta>', description: 'AdamW β1', kind: 'number', schema: z.number().min(0).lt(1), defaultValue: 0.9 },
  { key: 'adamBeta2', flag: '--adam-beta2 <beta>', description: 'AdamW β2', kind: 'number', schema: z.number().min(0).lt(1), defaultValue: 0.98 },
  { key: 'weightDecay', flag: '--weight-decay <lambda>', description: 'AdamW decoupled weight decay', kind: 'number', schema: z.number().min(0), defaultValue: 0.1 },
  { key: 'loraRank', flag: '--lora-rank <r>', description: 'LoRA rank', kind: 'integer', schema: positive, defaultValue: 16 },
  { key: 'loraAlpha', flag: '--lora-alpha <alpha>', description: 'LoRA alpha (scale alpha / rank)', kind: 'number', schema: z.number().positive(), defaultValue: 32 },
  { key: 'rewardBaseline', flag: '--reward-baseline <kind>', description: "none | batch | negative: batch takes each reward against the mean of the training step's other rewards (leave-one-out), so a step of equal rewards trains on the teacher's gap alone; negative takes that mean only when it is below zero", kind: 'string', schema: z.enum(['none', 'batch', 'negative']), defaultValue: 'none' },
  { key: 'klCoefficient', flag: '--kl-coefficient <beta>', description: 'weight of the KL to the base model (0: no reference pass)', kind: 'number', schema: z.number().min(0), defaultValue: 0 },
  { key: 'anchorCoefficient', flag: '--anchor-coefficient <alpha>', description: "weight of the anchor: KL from the base model's likeliest tokens at each response position to the policy, which keeps a small model's language while a few samples train it (0: off)", kind: 'number', schema: z.number().min(0), defaultValue: 0 },
  { key: 'anchorTopK', flag: '--anchor-top-k <k>', description: "how many of the base model's likeliest tokens the anchor compares at each position", kind: 'integer', schema: z.number().int().min(1).max(64), defaultValue: defaultAnchorTopK },
  { key: 'pinSessions', flag: '--pin-sessions', description: 'a session keeps the policy version it started with until it ends', kind: 'boolean', schema: z.boolean(), defaultValue: false },
  { key: 'apiKey', flag: '--api-key <key>', description: 'tenant API key, "tenant=key" or a bare key (repeatable)', kind: 'list', schema: z.array(z.string().min(8, 'API keys need at least 8 characters')), defaultValue: [] },
  { key: 'adminKey', flag: '--admin-key <key>', description: 'admin API key', kind: 'string', schema: z.string().min(8, 'the admin key needs at least 8 characters') },
  { key: 'bodyLimit', flag: '--body-limit <bytes>', description: 'largest request body accepted', kind: 'integer', schema: positive, defaultValue: 8 * 1024 * 1024 },
  { key: 'concurrencyPerKey', flag: '--concurrency-per-key <n>', description: 'concurrent requests per API key before 429', kind: 'integer', schema: positive, defaultValue: 64 },
  { key: 'maxTokens', flag: '--max-tokens <n>', description: 'max_tokens when a request gives none', kind: 'integer', schema: positive, defaultValue: 1024 },
  { key: 'temperature', flag: '--temperature <t>', description: "temperature when a request gives none (default: the model folder's generation_config.json, as vLLM serves it, else 1)", kind: 'number', schema: z.number().min(0).max(2) },
  { key: 'topP', flag: '--top-p <p>', description: "top_p when a request gives none (default: the model folder's generation_config.json, else 1)", kind: 'number', schema: z.number().gt(0).max(1) },
  { key: 'topK', flag: '--top-k <k>', description: "top_k when a request gives none (default: the model folder's generation_config.json, else none; 0: none)", kind: 'integer', schema: z.number().int().min(0) },
  { key: 'sessionIdleTimeout', flag: '--session-idle-timeout <seconds>', description: 'close sessions idle this long', kind: 'integer', schema: positive, defaultValue: 1800 },
  { key: 'url', flag: '--url <url>', description: 'URL of a running clawrl server', kind: 'string', schema: z.url(), defaultValue: 'http://127.0.0.1:8400' },
  { key: 'json', flag: '--json', description: 'print JSON', kind: 'boolean', schema: z.boolean(), defaultValue: false },
  { key: 'config', flag: '--config <file>', description: 'JSON config file with any of these options by camelCase key', kind: 'string', schema: z.string().min(1) },
] as const satisfies readonly OptionSpecification[];

export type OptionKey = (typeof optionSpecifications)[number]['key'];

export function optionSpecification(key: OptionKey): OptionSpecification {
  const found = optionSpecifications.find((specification) => specification.key === key);
  if (found === undefined) throw new RangeError(`unknown option ${key}`);
  return found;
}

export function environmentVariableOf(key: OptionKey): string {
  return environmentName(optionSpecification(key).flag);
}

function describe(specification: OptionSpecification): string {
  return `${specification.flag.split(' ')[0]} (${environmentName(specification.flag)})`;
}

/** Text from a flag or the environment, coerced to the option's kind. */
function coerceText(specification: OptionSpecification, text: string): unknown {
  switch (specification.kind) {
    case 'string':
      return text;
    case 'integer':
    case 'number':
      return text.trim() === '' ? Number.NaN : Number(text);
    case 'boolean': {
      const normalized = text.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(normalized)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(normalized)) return false;
      return text;
    }
    case 'list':
      return text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  }
}

export interface ConfigurationSources {
  /** Values the user typed on the command line (commander source 'cli' only). */
  flags: Record<string, unknown>;
  /** Parsed config file, or empty. */
  file: Record<string, unknown>;
  environment: Record<string, string | undefined>;
}

/**
 * Resolves the given options: flag > config file > environment > default. Throws a
 * `configuration_error` naming the option, its variable and the problem.
 */
export function resolveConfiguration<Key extends OptionKey>(keys: readonly Key[], sources: ConfigurationSources): Record<Key, unknown> {
  const unknownFileKeys = Object.keys(sources.file).filter((key) => !optionSpecifications.some((option) => option.key === key));
  if (unknownFileKeys.length > 0) {
    throw new ClawrlError('configuration_error', `Unknown option(s) in the config file: ${unknownFileKeys.join(', ')}.`);
  }
  const resolved = {} as Record<Key, unknown>;
  for (const key of keys) {
    const specification = optionSpecification(key);
    const variable = environmentName(specification.flag);
    let value: unknown;
    if (sources.flags[key] !== undefined) {
      const flagValue = sources.flags[key];
      value = typeof flagValue === 'string' ? coerceText(specification, flagValue) : flagValue;
    } else if (sources.file[key] !== undefined) {
      value = sources.file[key];
    } else if (sources.environment[variable] !== undefined) {
      value = coerceText(specification, sources.environment[variable] ?? '');
    } else {
      value = specification.defaultValue;
    }
    if (value === undefined) {
      resolved[key] = undefined;
      continue;
    }
    const parsed = specification.schema.safeParse(value);
    if (!parsed.success) {
      const problem = parsed.error.issues[0]?.message ?? 'invalid value';
      throw new ClawrlError('configuration_error', `Invalid value for ${describe(specification)}: ${problem} (got ${JSON.stringify(value)}).`, {
        param: key,
      });
    }
    resolved[key] = parsed.data;
  }
  return resolved;
}
