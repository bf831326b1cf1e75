/**
 * `clawrl eval personalize`: the personalization experiment (docs/personalization.md). Without
 * `--url` it starts its own `clawrl serve` child on a free loopback port with a fresh data folder,
 * so every run starts from the base model; with `--url` it drives that server as it is.
 *
 * Defaults for the server it starts, and why:
 * - `--judge policy` (serve's own default): the served model judges its own turns from the
 *   simulated user's replies, as in the paper. The `rules` judge's default predicates recognise
 *   only 2 of the 10 built-in complaints and give no hints, so `opd` and `combine` would learn
 *   nothing from it; it is for smoke tests.
 * - `--train-every 4`: the step size the tiny-model spike measured (4 samples per step), unless
 *   set by flag, config file or `CLAWRL_TRAIN_EVERY`. At serve's 16 a step would come only every
 *   ten or so sessions.
 * - `--train-params` from the model's recipe (full for builtin:tiny: it learned the preference in
 *   8–16 sessions with full-parameter updates and needed 40+ with LoRA).
 * - The recipe settings (anchor, support set, reward baseline, ...) are the experiment's own
 *   flags (`personalize-recipe.ts`): the model's recipe, the experiment's defaults and the knobs
 *   given are written to a recipe file in the server's data folder, passed as `--recipe`.
 * Other `CLAWRL_*` variables reach the child unchanged, so any serve option can be set that way.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { loadSimulatedUser } from '../../lab/personalize/load-simulated-user.js';
import { createPersonalizeClient } from '../../lab/personalize/personalize-client.js';
import { minimumProbeSize, personalizeMethods, type PersonalizeMethod, type PersonalizeResult } from '../../lab/personalize/personalize-result.js';
import { runPersonalizeExperiment, type PersonalizeProgress } from '../../lab/personalize/run-personalize-experiment.js';
import { startExperimentServer, type ExperimentServer } from '../../lab/personalize/start-experiment-server.js';
import { writePersonalizeOutput } from '../../lab/personalize/write-personalize-output.js';
import { z } from 'zod';
import { configurationSections, type RecipeSettings } from '../configuration/configuration-schema.js';
import { environmentVariableOf } from '../configuration/configuration.js';
import { defaultExperimentTrainEvery, judgeRulesFileOf, modelRecipeOf, writeExperimentRecipe } from '../configuration/personalize-recipe.js';

/** Options of the experiment and of the server it starts, with serve's flags, file keys and variables. */
const { files, storage, engine, gateway, judge, trainer, client } = configurationSections;
export const personalizeSchema = z.object({
  ...files.pick({ config: true }).shape,
  ...client.shape,
  ...gateway.pick({ apiKey: true, adminKey: true, maxTokens: true, temperature: true, topP: true, topK: true }).shape,
  ...engine.shape,
  ...judge.omit({ judgeRules: true }).shape,
  ...trainer.pick({ trainEvery: true, trainParams: true, learningRate: true, klCoefficient: true, maxStaleness: true, rlWeight: true, opdWeight: true, policyScope: true }).shape,
  ...storage.pick({ data: true }).shape,
});
export type PersonalizeConfiguration = z.infer<typeof personalizeSchema>;
export type PersonalizeKey = keyof PersonalizeConfiguration;
export { defaultExperimentTrainEvery };

export const defaultPersonalizeSessions = 20;
/** Long enough for a step and its judging with a few runs sharing 2 cores; fifteen runs at once needed more. */
export const defaultMaxWaitMinutes = 10;
/** Help where the experiment's meaning or default differs from serve's. */
export const personalizeHelp: Record<string, string> = {
  url: 'drive this running clawrl server (default: start a fresh one as a child process)',
  data: "data folder of the server it starts, kept afterwards (default: a temporary folder, removed after a successful run)",
  trainEvery: `ready samples per training step of the server it starts (default: ${defaultExperimentTrainEvery})`,
  trainParams: "lora | full, for the server it starts (default: the model's recipe, full for builtin:tiny; else lora)",
  judge: 'judge of the server it starts: rules | policy | openai (default: "policy")',
  apiKey: 'API key the experiment sends (the first one), also given to the server it starts',
  adminKey: 'admin key, for GET /admin/policies and /admin/turns (also given to the server it starts)',
};

export interface PersonalizeCommandOptions {
  user: string;
  method: string;
  sessions: string;
  seed: string;
  out?: string;
  probeSize?: string;
  /** commander's `--no-wait`: false drives sessions at full speed. */
  wait?: boolean;
  /** `--max-wait <minutes>`: the longest wait for the server after one session. */
  maxWait?: string;
  /** `--final-feedback`: the reply to each session's last response goes to `POST /v1/feedback`. */
  finalFeedback?: boolean;
  /** `--judge-rules`: a rules-judge spec file or `user:<user>`, for the server it starts. */
  judgeRules?: string;
}

export interface PersonalizeCommandInput {
  options: PersonalizeCommandOptions;
  /** The resolved `personalizeSchema` (flag > config file > environment > default). */
  configuration: PersonalizeConfiguration;
  /** Keys set by flag, config file or environment rather than left at their default. */
  explicitKeys: ReadonlySet<string>;
  /** The experiment knobs given (`--anchor-coefficient`, ...), for the server's recipe. */
  knobs: Partial<RecipeSettings>;
  configFile: string | undefined;
  environment: Record<string, string | undefined>;
}

export function integerOption(name: string, text: string, minimum: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum) {
    throw new ClawrlError('configuration_error', `--${name} must be an integer of at least ${minimum}, got ${JSON.stringify(text)}.`, { param: name });
  }
  return value;
}

function methodOf(text: string): PersonalizeMethod {
  const method = personalizeMethods.find((candidate) => candidate === text);
  if (method === undefined) throw new ClawrlError('configuration_error', `--method must be rl, opd, combine or base, got ${JSON.stringify(text)}.`, { param: 'method' });
  return method;
}

/** Files the experiment writes into the server's data folder and passes to it. */
export interface ExperimentServerFiles {
  recipe: string;
  judgeRules: string | undefined;
}

export function serveArgumentsOf(input: PersonalizeCommandInput, method: PersonalizeMethod, files: ExperimentServerFiles): string[] {
  const configuration = input.configuration;
  const explicit = (key: PersonalizeKey) => input.explicitKeys.has(key);
  const flags: Array<[string, unknown]> = [
    ['--model', configuration.model],
    ...configuration.servedModelName.map((name): [string, unknown] => ['--served-model-name', name]),
    ['--engine', configuration.engine],
    ['--upstream', configuration.upstream],
    ['--upstream-model', configuration.upstreamModel],
    ['--upstream-timeout', configuration.upstreamTimeout],
    // A follow-up that no longer fits ends the session, as a user starts a fresh chat: prompts over the window are refused, not fitted.
    ['--prompt-overflow', configuration.engine === 'local' ? 'error' : undefined],
    ['--judge', configuration.judge],
    ['--judge-url', configuration.judgeUrl],
    ['--judge-model', configuration.judgeModel],
    ['--judge-rules', files.judgeRules],
    ['--recipe', files.recipe],
    ['--train-every', explicit('trainEvery') ? configuration.trainEvery : defaultExperimentTrainEvery],
    ['--train-params', explicit('trainParams') ? configuration.trainParams : modelRecipeOf(configuration.model).trainParams],
    ['--learning-rate', configuration.learningRate],
    ['--rl-weight', explicit('rlWeight') ? configuration.rlWeight : undefined],
    ['--opd-weight', explicit('opdWeight') ? configuration.opdWeight : undefined],
    ['--kl-coefficient', explicit('klCoefficient') ? configuration.klCoefficient : undefined],
    ['--max-staleness', explicit('maxStaleness') ? configuration.maxStaleness : undefined],
    ['--policy-scope', explicit('policyScope') ? configuration.policyScope : undefined],
    ['--max-tokens', configuration.maxTokens],
    ['--temperature', configuration.temperature],
    ['--top-p', configuration.topP],
    ['--top-k', configuration.topK],
    ['--config', input.configFile],
  ];
  // The baseline serves and judges exactly like the others but never trains.
  const methodFlags = method === 'base' ? ['--no-train'] : ['--method', method];
  // A switch travels as its flag alone.
  return [...methodFlags, ...flags.flatMap(([flag, value]) => (value === undefined ? [] : value === true ? [flag] : [flag, String(value)]))];
}

/** The keys of `personalizeSchema` set by flag, config file or environment rather than left at their default. */
export function explicitKeysOf(
  flags: Record<string, unknown>,
  file: Record<string, unknown>,
  environment: Record<string, string | undefined>,
  schema: z.ZodObject = personalizeSchema,
): Set<string> {
  return new Set(
    Object.keys(schema.shape).filter((key) => {
      const variable = environmentVariableOf(key);
      return flags[key] !== undefined || file[key] !== undefined || (variable !== undefined && environment[variable] !== undefined);
    }),
  );
}

/** Keys travel in the environment, where process listings do not show them. */
export function serverEnvironmentOf(input: {
  configuration: Pick<PersonalizeConfiguration, 'apiKey' | 'adminKey' | 'upstreamApiKey' | 'upstreamAdminApiKey'>;
  environment: Record<string, string | undefined>;
}): Record<string, string | undefined> {
  const configuration = input.configuration;
  const apiKeys = configuration.apiKey;
  return {
    ...input.environment,
    ...(apiKeys.length === 0 ? {} : { CLAWRL_API_KEY: apiKeys.join(',') }),
    ...(configuration.adminKey === undefined ? {} : { CLAWRL_ADMIN_KEY: String(configuration.adminKey) }),
    ...(configuration.upstreamApiKey === undefined ? {} : { CLAWRL_UPSTREAM_API_KEY: String(configuration.upstreamApiKey) }),
    ...(configuration.upstreamAdminApiKey === undefined ? {} : { CLAWRL_UPSTREAM_ADMIN_API_KEY: String(configuration.upstreamAdminApiKey) }),
  };
}

/** The bare key a client sends: `tenant=key` entries carry the key after the `=`. */
export function clientKeyOf(entries: string[]): string | undefined {
  const entry = entries[0];
  if (entry === undefined) return undefined;
  const separator = entry.indexOf('=');
  return separator < 0 ? entry : entry.slice(separator + 1);
}

export function formatProgress(progress: PersonalizeProgress): string {
  switch (progress.kind) {
    case 'probe-started':
      return `probe after session ${progress.afterSession}: ${progress.size} held-out first messages${progress.attempt > 1 ? ` (attempt ${progress.attempt}: the version changed during the last one)` : ''}`;
    case 'probe': {
      const probe = progress.probe;
      return `probe after session ${probe.afterSession}: policy v${probe.policyVersion} satisfies ${probe.satisfied}/${probe.size} (${probe.satisfactionRate.toFixed(2)})${probe.incoherent ? `, ${probe.incoherent} unusable (cut off, repeating, off the question)` : ''}${probe.mixedVersions ? ', versions still mixed' : ''}`;
    }
    case 'session': {
      const session = progress.session;
      return [
        `session ${session.index}/${progress.total}`,
        `first response (policy v${session.policyVersion}) ${session.firstResponseSatisfied ? 'satisfied the user' : 'drew a complaint'}`,
        `satisfied so far ${progress.satisfiedSoFar}/${session.index}`,
        `serving v${progress.servedVersion}, probe rate ${progress.servedProbeRate.toFixed(2)}`,
      ].join('  ');
    }
    case 'wait':
      return progress.outcome === 'no-admin'
        ? 'warning: no admin view of the server (GET /admin/status), so sessions do not wait for judging and training; sessions to success then depend on how fast this client runs'
        : `warning: the server had not caught up ${Math.round(progress.waitedMs / 1000)} s after session ${progress.afterSession}; not waiting for it any more in this run`;
  }
}

export function formatPersonalizeResult(result: PersonalizeResult): string {
  const judge = result.judge === null ? 'unknown (no admin view)' : `${result.judge.judge}${result.judge.judgeModel === null ? '' : ` (${result.judge.judgeModel})`}`;
  return [
    `user ${result.user}, method ${result.method}, seed ${result.seed}, model ${result.model}, judge ${judge}${result.finalFeedback === true ? ', final replies sent as feedback' : ''}${result.sharedWith === undefined ? '' : `, sharing the server with ${result.sharedWith.join(', ')}`}`,
    ...(result.sampling == null
      ? []
      : [`sampled at               temperature ${result.sampling.temperature}, top_p ${result.sampling.topP}${result.sampling.topK === undefined ? '' : `, top_k ${result.sampling.topK}`} (the server's defaults)`]),
    `base probe rate          ${result.baseProbeRate.toFixed(2)} (${result.probeSize} held-out first messages)`,
    `sessions to success      ${result.sessionsToSuccess ?? `never in ${result.sessions.length} sessions`} (probe rate ≥ ${result.successThreshold} and staying)`,
    `paper's criterion        ${result.consecutiveCriterion ?? 'never'} (3 consecutive satisfied first responses)`,
    `probe                    ${result.probe.map((probe) => `v${probe.policyVersion}@${probe.afterSession}: ${probe.satisfactionRate.toFixed(2)}`).join(', ')}`,
    ...(result.stoppedWaiting == null
      ? []
      : [`warning                  stopped waiting for the server after session ${result.stoppedWaiting.afterSession} (${result.stoppedWaiting.reason}): later sessions met less trained versions`]),
  ].join('\n');
}

/**
 * Several simulated users at once (`--user teacher,ta,student`) talk to one server, each with its
 * own API key naming it (`<user>=<key>`, made up for the run and passed by environment), so the
 * server records and, with `--policy-scope user`, trains each apart. Their keys and an admin key (for
 * the waits) are made here: the server must be one this command starts.
 */
export function sharedServerKeysOf(users: readonly string[], input: Pick<PersonalizeCommandInput, 'configuration' | 'explicitKeys'>): { apiKeys: Map<string, string>; adminKey: string } | null {
  if (users.length < 2) return null;
  if (input.explicitKeys.has('url')) throw new ClawrlError('configuration_error', 'Several --user names share a server this command starts, each with a key it makes; drop --url.', { param: 'url' });
  if (input.configuration.apiKey.length > 0) throw new ClawrlError('configuration_error', 'Several --user names get one key each, made for the run; drop --api-key.', { param: 'apiKey' });
  if (new Set(users).size !== users.length) throw new ClawrlError('configuration_error', `--user names a user twice: ${users.join(',')}.`, { param: 'user' });
  const made = () => randomBytes(18).toString('base64url');
  return { apiKeys: new Map(users.map((user) => [user, `${user}=${made()}`])), adminKey: input.configuration.adminKey ?? made() };
}

export async function runPersonalizeCommand(input: PersonalizeCommandInput): Promise<PersonalizeResult[]> {
  const { options } = input;
  const users = options.user.split(',').map((name) => name.trim()).filter((name) => name !== '').map(loadSimulatedUser);
  if (users.length === 0) throw new ClawrlError('configuration_error', '--user names no simulated user.', { param: 'user' });
  const shared = sharedServerKeysOf(users.map((user) => user.name), input);
  const configuration: PersonalizeConfiguration = shared === null ? input.configuration : { ...input.configuration, apiKey: [...shared.apiKeys.values()], adminKey: shared.adminKey };
  input = { ...input, configuration };
  const method = methodOf(options.method);
  const sessions = integerOption('sessions', options.sessions, 1);
  const seed = integerOption('seed', options.seed, 0);
  const probeSize = options.probeSize === undefined ? minimumProbeSize : integerOption('probe-size', options.probeSize, 1);
  const maxWaitMinutes = integerOption('max-wait', options.maxWait ?? String(defaultMaxWaitMinutes), 1);
  const progress = (line: string) => process.stderr.write(`clawrl eval: ${line}\n`);
  if (probeSize < minimumProbeSize) progress(`warning: a probe of ${probeSize} < ${minimumProbeSize} messages is for smoke tests; its sessionsToSuccess is not the measure`);

  let server: ExperimentServer | undefined;
  let serverArguments: string[] | null = null;
  let temporaryData: string | undefined;
  // Given with --url, or set once this command has started its own server below.
  let url = configuration.url ?? '';
  let stage = 'Starting clawrl serve failed';
  const stopOnSignal = () => {
    progress('interrupted: stopping');
    void (server?.stop(10_000) ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    if (!input.explicitKeys.has('url')) {
      const data = input.explicitKeys.has('data') ? configuration.data : (temporaryData = mkdtempSync(path.join(tmpdir(), 'clawrl-personalize-')));
      mkdirSync(data, { recursive: true });
      progress(`starting clawrl serve (data and server.log in ${data})`);
      const files = { recipe: writeExperimentRecipe(data, configuration.model, input.knobs), judgeRules: judgeRulesFileOf(data, options.judgeRules) };
      serverArguments = serveArgumentsOf(input, method, files);
      server = await startExperimentServer({
        cliScript: fileURLToPath(new URL('../main.js', import.meta.url)),
        serveArguments: serverArguments,
        data,
        environment: serverEnvironmentOf(input),
        preparedFiles: [files.recipe, ...(files.judgeRules === undefined || files.judgeRules === options.judgeRules ? [] : [files.judgeRules])],
      });
      url = server.url;
      progress(`server ready at ${url}`);
      const trainingOff = /training is off: [^\n]*/.exec(server.logTail());
      if (trainingOff !== null) progress(`warning: ${trainingOff[0]}; this run measures the base model only`);
    }
    const knobs = Object.keys(input.knobs);
    if (server === undefined && knobs.length > 0) progress(`warning: ${knobs.join(', ')} set the recipe of a server this command starts; the server at --url keeps its own`);
    stage = `The experiment against ${url} failed`;
    const runStarted = Date.now().toString(36);
    // Side by side, so each user's sessions meet the server as the others' load it.
    const results = await Promise.all(
      users.map(async (user) => {
        const apiKey = clientKeyOf(shared === null ? configuration.apiKey : [shared.apiKeys.get(user.name) ?? '']);
        const others = users.filter((other) => other !== user).map((other) => other.name);
        const measured = await runPersonalizeExperiment({
          // With a lineage per user, each user's active version is its own lineage's.
          client: createPersonalizeClient({ url, apiKey, adminKey: configuration.adminKey, lineageUser: shared !== null && configuration.policyScope === 'user' ? user.name : undefined }),
          user,
          method,
          seed,
          sessions,
          probeSize,
          waitForServer: options.wait !== false,
          maxWaitMs: maxWaitMinutes * 60_000,
          finalFeedback: options.finalFeedback === true,
          runId: `personalize-${runStarted}-${user.name}-${method}-${seed}`,
          onProgress: (event) => progress(`${shared === null ? '' : `${user.name}: `}${formatProgress(event)}`),
        });
        const result: PersonalizeResult = { ...measured, serverArguments, ...(shared === null ? {} : { sharedWith: others }) };
        if (method !== 'base' && result.serverMethod !== null && result.serverMethod !== method) {
          progress(`warning: the server built ${result.serverMethod} samples, not ${method}; start it with --method ${method}`);
        }
        return result;
      }),
    );
    await server?.stop();
    if (temporaryData !== undefined) rmSync(temporaryData, { recursive: true, force: true });
    for (const result of options.out === undefined ? [] : results) {
      const written = writePersonalizeOutput(options.out as string, result);
      progress(`wrote ${written.resultFile}, ${written.chartFile} and ${written.summaryFile} (${written.charted} result(s))`);
    }
    return results;
  } catch (error) {
    const tail = server?.logTail() ?? '';
    await server?.stop(10_000);
    const kept = temporaryData === undefined ? '' : ` The server's data and log are kept in ${temporaryData}.`;
    const message = ClawrlError.isInstance(error) || error instanceof Error ? error.message : String(error);
    throw new ClawrlError(
      ClawrlError.isInstance(error) ? error.code : 'upstream_error',
      `${stage}: ${message}${kept}${tail === '' ? '' : `\nEnd of the server log:\n${tail.slice(-3000)}`}`,
      { cause: error },
    );
  } finally {
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
  }
}
