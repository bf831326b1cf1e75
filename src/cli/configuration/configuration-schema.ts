/**
 * The one configuration schema, nested by component. Every option is a zod schema carrying its
 * flag and description (`option`); the flags, the `CLAWRL_*` variables, the config-file keys,
 * `--help`, `docs/configuration.md` and the typed configuration of each command are all derived
 * from it (`configuration.ts`). Recipe settings (`recipeSettings`) have no flag: they come from
 * a recipe file (`--recipe`, or the model folder's `recipe.json`), which may also set some
 * operator options below a flag, the config file and the environment.
 */
import { onDeleteActions } from '../../gateway/data-eraser.js';
import { z } from 'zod';
import { defaultAnchorTopK } from '../../core/rl/policy-loss.js';
import { defaultUserQuotas } from '../../core/pick-user-to-train.js';
import { sampleMethodSchema } from '../../spec/records.js';
import type { TrainingLossName } from '../../spec/training-engine.js';
import { runNamePattern } from '../../rollouts/manager-worker/rollout-queue-api.js';
import { defaultMemoryTokens, userMemoryModes } from '../../core/user-memory-context.js';
import { defaultMemoryEntriesPerUser } from '../../core/user-memory-text.js';
import { defaultMaxResidentAdapters } from '../../engines/local/create-local-inference-engine.js';
import { defaultMaxLoadedAdapters } from '../../engines/openai-compatible/policy-registry.js';
import { defaultMaxTrainingClients } from '../../engines/tinker/create-tinker-training-engine.js';

export interface OptionMetadata {
  /** Flag as commander declares it, e.g. `--port <number>`; its name gives `CLAWRL_PORT`. */
  flag: string;
  description: string;
  /** A recipe file may set it (below flag, config file and environment). */
  recipe?: boolean;
}

export const optionRegistry = z.registry<OptionMetadata>();

function option<Schema extends z.ZodType>(schema: Schema, metadata: OptionMetadata): Schema {
  optionRegistry.add(schema, metadata);
  return schema;
}

/** The losses `--loss` names (`spec/training-engine.ts`). */
const trainingLossNames = ['decoupled_ppo', 'ppo', 'importance_sampling'] as const satisfies readonly TrainingLossName[];

const port = () => z.number().int().min(0).max(65535);
const positive = () => z.number().int().positive();

export const configurationSections = {
  files: z.object({
    config: option(z.string().min(1).optional(), { flag: '--config <file>', description: 'JSON config file: options by key, flat or nested by component (docs/configuration.md)' }),
    recipe: option(z.string().min(1).optional(), { flag: '--recipe <file>', description: "JSON recipe: how this model learns (docs/configuration.md; default: the model folder's recipe.json, e.g. models/builtin-tiny/recipe.json)" }),
  }),
  storage: z.object({
    data: option(z.string().min(1).default('./.clawrl'), { flag: '--data <dir>', description: 'data directory (SQLite store, checkpoints)' }),
    store: option(z.enum(['sqlite', 'postgres']).default('sqlite'), { flag: '--store <store>', description: 'sqlite | postgres' }),
    storeUrl: option(z.string().min(1).optional(), { flag: '--store-url <url>', description: 'Postgres connection URL' }),
  }),
  bus: z.object({
    bus: option(z.enum(['memory', 'nats']).default('memory'), { flag: '--bus <bus>', description: 'memory | nats' }),
    busUrl: option(z.string().min(1).optional(), { flag: '--bus-url <url>', description: 'NATS server URL (comma-separated for a cluster)' }),
    busPrefix: option(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ and -, at most 32').default('clawrl'), {
      flag: '--bus-prefix <name>',
      description: 'JetStream stream and subject prefix of this deployment, so several share one NATS',
    }),
    instance: option(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and -, at most 40').optional(), {
      flag: '--instance <name>',
      description: "this process's name in a distributed deployment: names its durable bus consumer (default: host name, and port for gateways; stable across restarts)",
    }),
  }),
  engine: z.object({
    model: option(z.string().min(1).default('builtin:tiny'), { flag: '--model <model>', description: 'builtin:tiny, a Hugging Face model folder, or the upstream model name' }),
    servedModelName: option(z.array(z.string().min(1)).default([]), {
      flag: '--served-model-name <name>',
      description: 'name clients use for the model, repeatable; requests must name one of them (default: --model, and a model folder\'s name)',
    }),
    engine: option(z.enum(['local', 'openai', 'vllm', 'sglang', 'tinker']).default('local'), { flag: '--engine <engine>', description: 'local | openai | vllm | sglang | tinker (samples on --tinker-url; --model is the tokenizer folder)' }),
    upstream: option(z.url().optional(), { flag: '--upstream <url>', description: 'base URL of a remote engine (e.g. http://127.0.0.1:8000)' }),
    tinkerUrl: option(z.url().optional(), { flag: '--tinker-url <url>', description: 'base URL of the Tinker service (hosted: https://tinker.thinkingmachines.dev/services/tinker-prod; SkyRL: http://127.0.0.1:8000)' }),
    tinkerBaseModel: option(z.string().min(1).optional(), { flag: '--tinker-base-model <name>', description: 'the base model as the Tinker service names it, e.g. Qwen/Qwen3-4B-Instruct-2507 (default: the served model name)' }),
    upstreamModel: option(z.string().min(1).optional(), { flag: '--upstream-model <name>', description: 'model name on the upstream (default: --model)' }),
    upstreamApiKey: option(z.string().min(1).optional(), { flag: '--upstream-api-key <key>', description: 'API key sent to the upstream' }),
    upstreamAdminApiKey: option(z.string().min(1).optional(), {
      flag: '--upstream-admin-api-key <key>',
      description: "sglang: the server's --admin-api-key, for its LoRA and weight-update routes, which refuse the --api-key once both are set (default: --upstream-api-key)",
    }),
    upstreamMaxLoras: option(z.number().int().min(2).default(defaultMaxLoadedAdapters), {
      flag: '--upstream-max-loras <n>',
      description:
        "vllm | sglang: LoRA adapters (policy versions) clawrl keeps loaded on the server at once: a version a request names is loaded on demand, least recently used out (in use, active or pinned never); at most the server's --max-cpu-loras (vLLM) or --max-loaded-loras (SGLang) (docs/deployment.md)",
    }),
    upstreamTimeout: option(positive().default(120_000), { flag: '--upstream-timeout <ms>', description: 'time-out for the upstream to start and to keep streaming' }),
    promptOverflow: option(z.enum(['error', 'fit']).optional(), {
      flag: '--prompt-overflow <policy>',
      description: "local engine, a prompt longer than the model's window: error (400 context_length_exceeded) | fit (newest messages, the system prompt's head, no tools; said by the X-Clawrl-Prompt-Fitted header; docs/builtin-model.md) (default: fit for builtin:tiny, else error)",
    }),
    prefixCache: option(z.number().int().min(0).default(256), {
      flag: '--prefix-cache <MiB>',
      description: "local engine: memory for the KV of recent prompt prefixes, so a prompt sharing one (an agent's next turn) computes only its new tokens (0: off)",
    }),
    maxRunningSequences: option(z.number().int().positive().default(16), {
      flag: '--max-running-sequences <n>',
      description: 'local engine: sequences decoding together in the continuous batch (a request with n choices counts n); more requests wait their turn (docs/engines.md)',
    }),
    kvCache: option(z.number().int().positive().default(256), {
      flag: '--kv-cache <MiB>',
      description: "local engine: memory the running batch's KV may take, reserved per request for its prompt plus max_tokens; a request that would exceed it waits (one alone always runs)",
    }),
    prefillChunk: option(z.number().int().positive().default(64), {
      flag: '--prefill-chunk <tokens>',
      description: 'local engine: prompt tokens prefilled per batch step, so a long prompt shares the sampler with running streams instead of stalling them',
    }),
    maxResidentAdapters: option(z.number().int().min(2).default(defaultMaxResidentAdapters), {
      flag: '--max-resident-adapters <n>',
      description:
        'local engine: LoRA adapters (policy versions) held at once; requests of different adapters decode in one batch, a cold one is loaded on demand (least recently used out; in use, active or pinned never); full-weight versions are served one at a time (docs/engines.md)',
    }),
    adapterDir: option(z.string().min(1).optional(), {
      flag: '--adapter-dir <dir>',
      description: 'vllm | sglang: folder clawrl writes each trained version to and the engine server reads, at the same path (a shared volume); without it trained versions are not served (docs/deployment.md)',
    }),
  }),
  gateway: z.object({
    host: option(z.string().min(1).default('127.0.0.1'), { flag: '--host <host>', description: 'address to bind' }),
    port: option(port().default(8400), { flag: '--port <number>', description: 'port to listen on (0 picks a free one)' }),
    apiKey: option(z.array(z.string().min(8, 'API keys need at least 8 characters')).default([]), { flag: '--api-key <key>', description: 'API key naming a user inside a tenant, "tenant/user=key", a tenant\'s one user, "tenant=key", or a bare key (repeatable; docs/operations.md)' }),
    trustedUserHeader: option(z.string().regex(/^[A-Za-z0-9-]+$/, 'an HTTP header name').optional(), {
      flag: '--trusted-user-header <name>',
      description: 'header a front proxy that authenticates people names the user in (only set it behind such a proxy: clients could otherwise name anyone); the user is qualified by the key\'s tenant, "tenant/name"',
    }),
    adminKey: option(z.string().min(8, 'the admin key needs at least 8 characters').optional(), { flag: '--admin-key <key>', description: 'admin API key' }),
    keyConsent: option(z.array(z.string().regex(/^.+=(train-off|record-off)$/, 'tenant=train-off or tenant=record-off')).default([]), {
      flag: '--key-consent <tenant=setting>',
      description: 'what an API key\'s requests consent to unless their X-Clawrl-Train / X-Clawrl-Record headers say: "tenant=train-off" (recorded, never trained on) or "tenant=record-off" (served, not recorded) (repeatable; docs/operations.md)',
    }),
    bodyLimit: option(positive().default(8 * 1024 * 1024), { flag: '--body-limit <bytes>', description: 'largest request body accepted' }),
    concurrencyPerKey: option(positive().default(64), { flag: '--concurrency-per-key <n>', description: 'concurrent requests per API key before 429' }),
    maxTokens: option(positive().default(1024), { flag: '--max-tokens <n>', description: 'max_tokens when a request gives none' }),
    temperature: option(z.number().min(0).max(2).optional(), { flag: '--temperature <t>', description: "temperature when a request gives none (default: the model folder's generation_config.json, as vLLM serves it, else 1)" }),
    topP: option(z.number().gt(0).max(1).optional(), { flag: '--top-p <p>', description: "top_p when a request gives none (default: the model folder's generation_config.json, else 1)" }),
    topK: option(z.number().int().min(0).optional(), { flag: '--top-k <k>', description: "top_k when a request gives none (default: the model folder's generation_config.json, else none; 0: none)" }),
    sessionIdleTimeout: option(positive().default(1800), { flag: '--session-idle-timeout <seconds>', description: 'close sessions idle this long' }),
    pinSessions: option(z.boolean().default(false), { flag: '--pin-sessions', description: 'a session keeps the policy version it started with until it ends' }),
    retainDays: option(positive().optional(), { flag: '--retain-days <n>', description: 'erase turns older than n days, with everything derived from them, on a schedule (default: keep them)' }),
    onDelete: option(z.enum(onDeleteActions).default('mark'), { flag: '--on-delete <action>', description: 'what an erasure does to the versions its samples trained: mark | retire (serve the newest untouched version) | retrain (retire, then train again on the samples that remain)' }),
    redact: option(z.string().min(1).default('default'), {
      flag: '--redact <rules>',
      description: 'what is redacted before a turn, next state or feedback is kept: off | default (keys, tokens, passwords, emails, phones, cards, IBANs, IPs) | a redaction spec file (JSON; docs/operations.md)',
    }),
    userMemory: option(z.enum(userMemoryModes).default('off'), {
      flag: '--user-memory <mode>',
      description: "each user's memory of accepted hints and feedback (docs/memory.md): off | context (added to the user's requests, any engine) | teacher (the OPD teacher's context only) | both",
    }),
    userMemoryEntries: option(positive().default(defaultMemoryEntriesPerUser), { flag: '--user-memory-entries <n>', description: 'memory entries kept per user; adding past it drops the least recently written' }),
    userMemoryTokens: option(positive().default(defaultMemoryTokens), { flag: '--user-memory-tokens <n>', description: "most tokens (estimated) of a user's memory added to a prompt; the newest entries that fit" }),
    resultsDir: option(z.string().min(1).optional(), { flag: '--results-dir <dir>', description: 'folder of `eval personalize` and `rollout` results (their --out) the dashboard\'s Experiments page charts' }),
  }),
  judge: z.object({
    judge: option(z.enum(['rules', 'policy', 'openai']).default('policy'), { flag: '--judge <judge>', description: 'rules | policy | openai' }),
    judgeUrl: option(z.url().optional(), { flag: '--judge-url <url>', description: 'OpenAI-compatible judge endpoint' }),
    judgeModel: option(z.string().min(1).optional(), {
      flag: '--judge-model <name>',
      description: "--judge openai: the endpoint's model; --judge policy: the model that judges instead of the served one, builtin:tiny-judge or a model folder (default builtin:tiny-judge when the policy is builtin:tiny; naming the policy makes it judge itself)",
    }),
    judgeContextTokens: option(positive().optional(), { flag: '--judge-context-tokens <tokens>', description: "the judge model's context window, which its prompt budgets are shared out of (default: the policy model's, or the judge endpoint's max_model_len, else 32768; docs/judging.md)" }),
    judgeRules: option(z.string().min(1).optional(), { flag: '--judge-rules <file>', description: 'what --judge rules judges by: a rules-judge spec file (JSON) (default: the built-in next-state predicates)' }),
  }),
  learning: z.object({
    method: option(sampleMethodSchema.default('combine'), { flag: '--method <method>', description: sampleMethodSchema.options.join(' | '), recipe: true }),
  }),
  trainer: z.object({
    trainEvery: option(positive().default(16), { flag: '--train-every <samples>', description: 'ready samples per training step', recipe: true }),
    noTrain: option(z.boolean().default(false), { flag: '--no-train', description: 'serve and record without training' }),
    trainParams: option(z.enum(['lora', 'full']).default('lora'), { flag: '--train-params <params>', description: 'lora | full: train LoRA adapters, or every weight (better for small models; publishes full weights)', recipe: true }),
    maxStaleness: option(z.number().int().min(0).default(2), { flag: '--max-staleness <versions>', description: 'drop (and count) samples more policy versions old than this', recipe: true }),
    learningRate: option(z.number().positive().optional(), { flag: '--learning-rate <lr>', description: "AdamW learning rate (default: the recipe's; else 1e-4 LoRA / 1e-5 full, builtin:tiny 1e-2 / 1e-3)", recipe: true }),
    adamBeta1: option(z.number().min(0).lt(1).default(0.9), { flag: '--adam-beta1 <beta>', description: 'AdamW β1', recipe: true }),
    adamBeta2: option(z.number().min(0).lt(1).default(0.98), { flag: '--adam-beta2 <beta>', description: 'AdamW β2', recipe: true }),
    weightDecay: option(z.number().min(0).default(0.1), { flag: '--weight-decay <lambda>', description: 'AdamW decoupled weight decay', recipe: true }),
    loraRank: option(positive().default(16), { flag: '--lora-rank <r>', description: 'LoRA rank', recipe: true }),
    loraAlpha: option(z.number().positive().default(32), { flag: '--lora-alpha <alpha>', description: 'LoRA alpha (scale alpha / rank)', recipe: true }),
    klCoefficient: option(z.number().min(0).default(0), { flag: '--kl-coefficient <beta>', description: 'weight of the KL to the base model (0: no reference pass)', recipe: true }),
    loss: option(z.enum(trainingLossNames).default('decoupled_ppo'), { flag: '--loss <loss>', description: `${trainingLossNames.join(' | ')}: the training objective (docs/training.md); the trainer refuses at start-up what its engine cannot compute`, recipe: true }),
    rlWeight: option(z.number().min(0).default(1), { flag: '--rl-weight <w>', description: "combine: weight of the reward r in A = w_rl·(r − b) + w_opd·clip(Δ, −C, C)", recipe: true }),
    opdWeight: option(z.number().min(0).default(1), { flag: '--opd-weight <w>', description: "combine: weight of the hint-conditioned teacher's gap Δ in A = w_rl·(r − b) + w_opd·clip(Δ, −C, C)", recipe: true }),
    opdClip: option(z.number().positive().default(1), { flag: '--opd-clip <C>', description: "opd/combine: the teacher's per-token gap Δ is clipped to [−C, C]", recipe: true }),
    trainer: option(z.enum(['local', 'tinker']).default('local'), { flag: '--trainer <trainer>', description: 'local | tinker: train in this process, or on a Tinker-compatible service (--tinker-url; API key from CLAWRL_TINKER_API_KEY only)' }),
    policyScope: option(z.enum(['global', 'user']).default('global'), {
      flag: '--policy-scope <scope>',
      description: "global | user: one policy trained on everyone's samples, or each user's own lineage trained on that user's samples and served to that user (the base until its first version; no --gate or --canary-share; docs/training.md)",
    }),
    userStepsPerDay: option(positive().default(defaultUserQuotas.stepsPerDay), { flag: '--user-steps-per-day <steps>', description: '--policy-scope user: training steps one user\'s lineage may take in any 24 hours' }),
    userSamplesKept: option(positive().default(defaultUserQuotas.samplesKept), { flag: '--user-samples-kept <samples>', description: '--policy-scope user: ready samples kept per user; older ones are dropped (reason user-quota)' }),
    maxTrainingClients: option(positive().default(defaultMaxTrainingClients), {
      flag: '--max-training-clients <count>',
      description: "--trainer tinker: Tinker training clients held at once, one per lineage trained (the global one, and each user's with --policy-scope user); beyond it the least recently used idle one is saved and its client loads the lineage that needs it (the local trainer has one worker, which its lineages take turns on)",
    }),
  }),
  versions: z.object({
    gate: option(z.enum(['replay', 'none']).default('none'), {
      flag: '--gate <gate>',
      description: 'replay | none: a trained version is replayed on held-out recorded turns and judged against the serving one before it serves anyone (docs/training.md); none: it serves at once',
    }),
    canaryShare: option(z.number().min(0).max(1).default(0), { flag: '--canary-share <fraction>', description: 'share of sessions (by a hash of the session id) a version that passed the gate serves before it is active; 0: no canary' }),
    canaryTurns: option(positive().default(50), { flag: '--canary-turns <n>', description: "the canary's length: canary turns without a regression before the version is active" }),
    canaryMargin: option(z.number().min(0).max(2).default(0.25), { flag: '--canary-margin <drop>', description: "roll the canary back when its mean reward or explicit feedback (−1..1) falls more than this below the serving version's" }),
    canaryMinScored: option(positive().default(5), { flag: '--canary-min-scored <n>', description: 'scored canary turns before its signal is compared' }),
    gateMargin: option(z.number().min(0).max(1).default(0.05), { flag: '--gate-margin <lead>', description: 'least (wins − losses) / turns of the candidate in the replay gate' }),
    gateAlpha: option(z.number().gt(0).max(1).default(0.25), { flag: '--gate-alpha <p>', description: "largest one-sided sign-test p-value of the candidate's wins in the replay gate" }),
    gateMinTurns: option(positive().default(8), { flag: '--gate-min-turns <n>', description: 'fewest judged held-out turns the replay gate decides on (fewer: the serving version stays)' }),
    gateSessions: option(positive().default(20), { flag: '--gate-sessions <n>', description: 'newest held-out sessions the replay gate replays' }),
    gateMaxTurns: option(positive().default(40), { flag: '--gate-max-turns <n>', description: 'most turns the replay gate replays' }),
    gateConcurrency: option(positive().default(4), { flag: '--gate-concurrency <n>', description: "turns the replay gate replays at once: their answers and judgements share the engine's batch with users' requests" }),
    heldOutShare: option(z.number().min(0).max(1).default(0.1), { flag: '--held-out-share <fraction>', description: 'with --gate replay: share of sessions (by a hash of the session id) judged but never trained on, the replay gate\'s evaluation set' }),
  }),
  queue: z.object({
    env: option(z.string().min(1).optional(), {
      flag: '--env <environment>',
      description: 'manager, worker: the environment, arithmetic | tool-calc | terminal, or a module exporting an EnvironmentDefinition (./my-env.js); its topics are tasks.<name> and results.<name>',
    }),
    tasks: option(positive().default(8), { flag: '--tasks <n>', description: "manager: how many of the environment's tasks the run publishes" }),
    split: option(z.enum(['train', 'test']).default('train'), { flag: '--split <split>', description: 'manager: train | test, the task split the run draws from' }),
    seed: option(z.number().int().min(0).default(1), { flag: '--seed <n>', description: "manager: seed of the run's tasks (the same seed, split and count give the same tasks)" }),
    run: option(z.string().regex(runNamePattern, 'letters, digits, _ and -, at most 64').optional(), {
      flag: '--run <name>',
      description: "manager: the run's name; a task and its result are published once per run and task, so a restarted manager republishes nothing (default: <env>-<split>-s<seed>-n<tasks>)",
    }),
    workers: option(z.number().int().min(0).default(0), {
      flag: '--workers <n>',
      description: 'manager: also run this many workers in this process (needed with --bus memory, whose queue no other process reaches)',
    }),
    sandbox: option(z.enum(['auto', 'bwrap', 'paths']).default('auto'), {
      flag: '--sandbox <mode>',
      description: "manager, worker, rollout: how the terminal environment confines commands: bwrap (bubblewrap: only the task's folder writable, no network; refuses to start without it) | paths (the path checks alone) | auto (bwrap where it runs, else paths with a warning)",
    }),
    ackWait: option(positive().default(60), {
      flag: '--ack-wait <seconds>',
      description: 'manager, worker: how long a task or result held by a worker or manager that died waits before it is delivered again (live ones keep theirs)',
    }),
  }),
  client: z.object({
    url: option(z.url().optional(), { flag: '--url <url>', description: "URL of a running clawrl server (default: http://<CLAWRL_HOST>:<CLAWRL_PORT>, or the config file's host and port, as the server reads them; else http://127.0.0.1:8400)" }),
    json: option(z.boolean().default(false), { flag: '--json', description: 'print JSON' }),
  }),
};

/** What only a recipe sets: how a model learns, beside the operator's options. */
export const recipeSettings = z.object({
  trainEpochs: positive().default(1).describe("passes over each training batch, each an optimizer step, before one version is published; later passes clip against the first pass's log-probs"),
  learningRateHalfLife: z.number().positive().optional().describe('halve the learning rate every this many optimizer steps (unset: constant)'),
  anchorCoefficient: z.number().min(0).default(0).describe("weight of the anchor: KL from the base model's likeliest tokens at each response position to the policy, which keeps a small model's language while a few samples train it (0: off)"),
  anchorTopK: z.number().int().min(1).max(64).default(defaultAnchorTopK).describe("how many of the base model's likeliest tokens the anchor compares at each position"),
  rewardBaseline: z.enum(['none', 'batch', 'negative']).default('none').describe("samples without a rollout group (live traffic): none | batch: each reward against the mean of the step's other such rewards (leave-one-out) | negative: that mean only when below zero. A rollout group's samples are always taken against their group's mean"),
  groupNormalizeStd: z.boolean().default(false).describe("rollout groups: divide each reward's difference from its group's mean by the group's standard deviation (classic GRPO; off: the mean only, Dr. GRPO)"),
  opdSupportK: z.number().int().min(0).max(20).default(0).describe("opd/combine: distil over the student's k likeliest tokens at each position, 0: the sampled token only"),
  judgeWeights: z.enum(['base', 'served']).default('base').describe('what --judge policy judges with: base (the frozen base weights, a separate PRM) | served (the served version; for builtin:tiny this also drops the default judge model builtin:tiny-judge)'),
  judgeHintGrounding: z.boolean().default(false).describe("the PRM judge keeps a hint sentence about a style only when the user's message mentions that style"),
});
export type RecipeSettings = z.infer<typeof recipeSettings>;

/** The same options, each optional and without its default (zod's `partial()` keeps defaults). */
export function withoutDefaults<Shape extends z.ZodRawShape>(object: z.ZodObject<Shape>): z.ZodObject<{ [Key in keyof Shape]: z.ZodOptional<z.ZodType<z.output<Shape[Key]>>> }> {
  const shape = Object.fromEntries(
    Object.entries(object.shape).map(([key, schema]) => [key, z.optional(schema instanceof z.ZodDefault ? schema.unwrap() : schema)]),
  );
  return z.object(shape) as z.ZodObject<{ [Key in keyof Shape]: z.ZodOptional<z.ZodType<z.output<Shape[Key]>>> }>;
}

/** Operator options a recipe may set, by key. */
const recipeOperatorShape = {
  ...withoutDefaults(configurationSections.learning).shape,
  ...withoutDefaults(configurationSections.trainer.omit({ noTrain: true, trainer: true, policyScope: true, userStepsPerDay: true, userSamplesKept: true, maxTrainingClients: true })).shape,
};

/** A recipe file: its description, operator options it sets, and recipe settings. */
export const recipeSchema = z.strictObject({
  description: z.string().optional(),
  ...recipeOperatorShape,
  ...withoutDefaults(recipeSettings).shape,
});
export type Recipe = z.infer<typeof recipeSchema>;

export const configurationSchema = z.object({ ...configurationSections, recipe: recipeSettings });
/** The whole typed configuration, nested as in a config file. */
export type Configuration = z.infer<typeof configurationSchema>;
export type SectionName = keyof typeof configurationSections;

/** The options of each command, flat: a command's flags are those of its components. */
const { files, storage, bus, engine, gateway, judge, learning, trainer, versions, queue, client } = configurationSections;
/** The manager appraises with the environment's verifier unless `--judge` names a judge it can build without an engine. */
const managerJudge = z.enum(['verifier', 'rules', 'openai']).default('verifier');
export const commandSchemas = {
  serve: z.object({ ...files.shape, ...storage.shape, ...bus.shape, ...engine.shape, ...gateway.shape, ...judge.shape, ...learning.shape, ...trainer.shape, ...versions.shape, ...recipeSettings.shape }),
  gateway: z.object({ ...files.pick({ config: true }).shape, ...storage.shape, ...bus.shape, ...engine.shape, ...gateway.shape, ...trainer.pick({ policyScope: true }).shape }),
  judge: z.object({ ...files.shape, ...storage.shape, ...bus.shape, ...engine.shape, ...judge.shape, ...learning.shape, ...versions.pick({ gate: true, heldOutShare: true }).shape, ...trainer.pick({ policyScope: true }).shape, ...recipeSettings.shape, ...gateway.pick({ redact: true, userMemory: true, userMemoryEntries: true, userMemoryTokens: true }).shape }),
  // The trainer runs the version lifecycle: the replay gate samples on an engine of its own (`--engine`) and judges with `--judge`.
  trainer: z.object({ ...files.shape, ...storage.shape, ...bus.shape, ...engine.shape, ...judge.shape, ...trainer.omit({ noTrain: true }).shape, ...versions.shape, ...recipeSettings.shape }),
  rejudge: z.object({ ...files.shape, ...storage.pick({ data: true, store: true, storeUrl: true }).shape, ...engine.shape, ...judge.shape, ...learning.pick({ method: true }).shape, ...client.pick({ json: true }).shape, ...recipeSettings.pick({ judgeWeights: true, judgeHintGrounding: true }).shape, redact: gateway.shape.redact }),
  client: z.object({ ...files.pick({ config: true }).shape, ...client.shape, adminKey: gateway.shape.adminKey }),
  evalJudge: z.object({ ...files.shape, ...engine.shape, ...judge.shape, ...client.pick({ json: true }).shape, ...recipeSettings.pick({ judgeWeights: true, judgeHintGrounding: true }).shape }),
  manager: z.object({
    ...files.pick({ config: true }).shape,
    ...bus.shape,
    ...queue.shape,
    ...client.shape,
    ...gateway.pick({ apiKey: true, adminKey: true, maxTokens: true, temperature: true }).shape,
    ...judge.omit({ judgeContextTokens: true }).shape,
    judge: managerJudge,
  }),
  worker: z.object({
    ...files.pick({ config: true }).shape,
    ...bus.shape,
    ...queue.pick({ env: true, ackWait: true, sandbox: true }).shape,
    ...client.shape,
    ...gateway.pick({ apiKey: true, adminKey: true, maxTokens: true, temperature: true }).shape,
  }),
  samplesExport: z.object({ ...files.pick({ config: true }).shape, ...storage.shape, json: client.shape.json }),
  redact: z.object({ ...files.pick({ config: true }).shape, redact: gateway.shape.redact, json: client.shape.json }),
};
export type CommandName = keyof typeof commandSchemas;
