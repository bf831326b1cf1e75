#!/usr/bin/env -S node --max-semi-space-size=64
/**
 * The `clawrl` command. The only composition root: it alone reads flags, the config file and
 * `CLAWRL_*` variables, then hands typed configuration to the commands.
 *
 * The node flag in the first line: a gateway turn allocates about half a megabyte (the 40 KB
 * request, the prompt's 11k ids), so at 32 requests in flight V8's default 16 MiB semi-spaces
 * fill before those requests end and every scavenge copies them; 64 MiB lets them die young
 * (without it the gateway spent 1.31× the CPU per agent turn against a paced upstream, `docs/benchmarks.md`). It can only be given at start-up, hence the shebang; the
 * gateway bench starts the server with the flags found here.
 */
import { Command, Option } from 'commander';
import { ClawrlError } from '../spec/clawrl-error.js';
import { addOptions, configurationOf, readConfigFile, typedFlags } from './configuration/command-options.js';
import { resolveConfiguration } from './configuration/configuration.js';
import { commandSchemas } from './configuration/configuration-schema.js';
import { createConsoleLogger } from './wiring/create-console-logger.js';
import { runServeCommand } from './commands/serve-command.js';
import { runGatewayCommand } from './commands/gateway-command.js';
import { runJudgeCommand } from './commands/judge-command.js';
import { runTrainerCommand } from './commands/trainer-command.js';
import { fetchStatus, formatStatus } from './commands/status-command.js';
import { runBenchCommand } from './commands/bench-command.js';
import { runPretrainTinyCommand } from './commands/pretrain-tiny-command.js';
import { runRejudgeCommand } from './commands/rejudge-command.js';
import { runSamplesExportCommand } from './commands/samples-export-command.js';
import { readStandardInput, redactWithRules } from './commands/redact-command.js';
import { addEvalCommands } from './commands/add-eval-commands.js';
import { fail } from './commands/fail.js';
import { serverUrlOf } from './commands/server-url-of.js';
import { activatePolicy, formatPolicies, listPolicies } from './commands/policy-command.js';
import { formatReceipt, requestErasure, type DataDeleteOptions } from './commands/data-command.js';
import { startManagerProcess } from './commands/manager-command.js';
import { startWorkerProcess } from './commands/worker-command.js';
import { runUntilSignal } from './commands/run-until-signal.js';
import { formatRolloutResult, rolloutHelp, rolloutSchema, runRolloutCommand, type RolloutCommandOptions } from './commands/rollout-command.js';
import { explicitKeysOf } from './commands/eval-command.js';


const program = new Command('clawrl')
  .description('Online reinforcement learning for LLM agents behind an OpenAI-compatible gateway')
  .showHelpAfterError();

addOptions(program.command('serve').description('serve, record, judge and train in one process'), commandSchemas.serve).action(
  async (_options: unknown, command: Command) => {
    try {
      const logger = createConsoleLogger();
      await runServeCommand(configurationOf(command, commandSchemas.serve, logger), logger);
    } catch (error) {
      fail(error);
    }
  },
);

const distributedHelp: Record<string, string> = {
  store: 'sqlite | postgres (distributed mode: postgres, so every process on every machine shares it)',
  bus: 'memory | nats (distributed mode: nats, so the processes hear each other)',
};

addOptions(program.command('gateway').description('distributed mode: the HTTP gateway alone (run several behind a load balancer)'), commandSchemas.gateway, distributedHelp).action(
  async (_options: unknown, command: Command) => {
    try {
      const logger = createConsoleLogger();
      await runGatewayCommand(configurationOf(command, commandSchemas.gateway, logger), logger);
    } catch (error) {
      fail(error);
    }
  },
);
addOptions(program.command('judge').description('distributed mode: a judge worker alone (run as many as the judge backend serves)'), commandSchemas.judge, distributedHelp).action(
  async (_options: unknown, command: Command) => {
    try {
      const logger = createConsoleLogger();
      await runJudgeCommand(configurationOf(command, commandSchemas.judge, logger), logger);
    } catch (error) {
      fail(error);
    }
  },
);
addOptions(program.command('trainer').description('distributed mode: the trainer alone (one per policy)'), commandSchemas.trainer, distributedHelp).action(
  async (_options: unknown, command: Command) => {
    try {
      const logger = createConsoleLogger();
      await runTrainerCommand(configurationOf(command, commandSchemas.trainer, logger), logger);
    } catch (error) {
      fail(error);
    }
  },
);

addOptions(program.command('status').description('counts and current policy version of a running server'), commandSchemas.client).action(
  async (_options: unknown, command: Command) => {
    try {
      const configuration = configurationOf(command, commandSchemas.client, undefined);
      const status = await fetchStatus(serverUrlOf(command, configuration.url), configuration.adminKey);
      process.stdout.write(`${configuration.json ? JSON.stringify(status, null, 2) : formatStatus(status)}\n`);
    } catch (error) {
      fail(error);
    }
  },
);

program
  .command('pretrain-tiny')
  .description('rebuild the built-in model from the project\'s own corpus (two worker threads, about an hour on 2 cores)')
  .option('--out <dir>', 'where to write the model folder and its checkpoints; copy the model files to models/builtin-tiny to ship them', './builtin-tiny')
  .option('--resume', 'continue from <out>/checkpoint')
  .option('--from <dir>', 'start from this model folder\'s weights and tokenizer (e.g. models/builtin-tiny) on a fresh schedule')
  .option('--seed <seed>', 'corpus seed: a different seed gives different examples (default 1)')
  .option('--learning-rate <rate>', 'peak learning rate (default 2e-3)', Number)
  .option('--steps <n>', 'optimizer steps (default 2000)', Number)
  .option('--max-minutes <n>', 'stop after this many minutes and write the folder anyway', Number)
  .addOption(new Option('--corpus <name>', 'judge: train the judge model builtin:tiny-judge on its judge-only corpus (with --from models/builtin-tiny; docs/builtin-model.md)').choices(['judge']))
  .option('--judge-share <fraction>', 'share of judge examples in the corpus stream, 0-1 (default 0.35)', Number)
  .option('--layers <n>', 'decoder layers (default 4); with --from, grow that model to this depth by block expansion', Number)
  .option('--hint-share <fraction>', 'share of tutoring examples whose user message carries a style hint, 0-1 (default 0.5)', Number)
  .option('--broken-reply-share <fraction>', 'share of judge examples on broken replies (cut off, looping, off-task), 0-1 (default 0)', Number)
  .option('--agent-prompt-share <fraction>', 'share of tutoring examples asked inside an agent-shaped prompt (a system prompt\'s head, context blocks, the question), 0-1 (default 0)', Number)
  .option('--tiny', 'a toy shape and recipe that finishes in seconds (smoke test)')
  .option('--json', 'print the run summary as JSON')
  .action(async (options: { out: string; resume?: boolean; from?: string; corpus?: string; seed?: string; learningRate?: number; steps?: number; maxMinutes?: number; judgeShare?: number; hintShare?: number; brokenReplyShare?: number; agentPromptShare?: number; layers?: number; tiny?: boolean; json?: boolean }) => {
    try {
      const summary = await runPretrainTinyCommand({
        out: options.out,
        resume: options.resume === true,
        tiny: options.tiny === true,
        ...(options.from === undefined ? {} : { from: options.from }),
        ...(options.seed === undefined ? {} : { seed: /^\d+$/.test(options.seed) ? Number(options.seed) : options.seed }),
        ...(options.learningRate === undefined ? {} : { learningRate: options.learningRate }),
        ...(options.steps === undefined ? {} : { steps: options.steps }),
        ...(options.maxMinutes === undefined ? {} : { maxMinutes: options.maxMinutes }),
        ...(options.corpus === undefined ? {} : { corpus: options.corpus as 'judge' }),
        ...(options.judgeShare === undefined ? {} : { judgeShare: options.judgeShare }),
        ...(options.hintShare === undefined ? {} : { hintShare: options.hintShare }),
        ...(options.brokenReplyShare === undefined ? {} : { brokenReplyShare: options.brokenReplyShare }),
        ...(options.agentPromptShare === undefined ? {} : { agentPromptShare: options.agentPromptShare }),
        ...(options.layers === undefined ? {} : { layers: options.layers }),
      });
      if (options.json === true) process.stdout.write(`${JSON.stringify(summary)}\n`);
    } catch (error) {
      fail(error);
    }
  });

program
  .command('bench')
  .description('benchmarks against a peer in the same run (docs/benchmarks.md)')
  .argument('<target>', 'gateway | engine | store | training | serving | dashboard | replay')
  .option('--json', 'print JSON')
  .option('--quick', 'a short run (smoke test), not for reporting figures')
  .option('--model <model>', 'training, replay: builtin:tiny or a Hugging Face model folder (default builtin:tiny)')
  .option('--sessions <n>', 'replay: sessions recorded and replayed against the candidate (default 200; --quick 8)')
  .option('--train-params <params>', 'training: lora | full (default lora)')
  .option('--judge-load <load>', 'gateway: concurrent (serve as users run it) | drained (judge backlog drained before each scenario) | none (clawrl gateway alone) (default concurrent)')
  .option('--rounds <n>', 'gateway: alternating rounds per scenario; more measure longer and average more noise (default 2)')
  .option('--adapters <n>', 'serving: also serve n random LoRA adapters at once from the embedded engine, against the base alone (at least 9; docs/benchmarks.md)')
  .option('--cli-script <file>', "gateway, serving: benchmark another build's dist/cli/main.js under this build's harness (default this build)")
  .option('--upstream-ttft-ms <ms>', 'gateway: the realistic upstream\'s time to first token (default 50)')
  .option('--upstream-tpot-ms <ms>', 'gateway: the realistic upstream\'s time per output token (default 25)')
  .option('--upstream-reply-tokens <n>', 'gateway: tokens in each realistic reply (default 32)')
  .action(async (target: string, options: { json?: boolean; quick?: boolean; model?: string; trainParams?: string; judgeLoad?: string; rounds?: string; adapters?: string; cliScript?: string; upstreamTtftMs?: string; upstreamTpotMs?: string; upstreamReplyTokens?: string; sessions?: string }) => {
    try {
      await runBenchCommand(target, {
        json: options.json === true,
        quick: options.quick === true,
        ...(options.judgeLoad === undefined ? {} : { judgeLoad: options.judgeLoad }),
        ...(options.rounds === undefined ? {} : { rounds: options.rounds }),
        ...(options.adapters === undefined ? {} : { adapters: options.adapters }),
        ...(options.cliScript === undefined ? {} : { cliScript: options.cliScript }),
        ...(options.upstreamTtftMs === undefined ? {} : { upstreamTtftMs: options.upstreamTtftMs }),
        ...(options.upstreamTpotMs === undefined ? {} : { upstreamTpotMs: options.upstreamTpotMs }),
        ...(options.upstreamReplyTokens === undefined ? {} : { upstreamReplyTokens: options.upstreamReplyTokens }),
        ...(options.sessions === undefined ? {} : { sessions: options.sessions }),
        ...(options.model === undefined ? {} : { model: options.model }),
        ...(options.trainParams === undefined ? {} : { trainParams: options.trainParams }),
      });
    } catch (error) {
      fail(error);
    }
  });

addOptions(program.command('rejudge').description('re-score stored turns with another judge or prompt version, keeping earlier judgements'), commandSchemas.rejudge)
  .option('--since <time>', 'only turns started since (epoch ms or a date)')
  .option('--force', 're-judge turns this judge already judged')
  .action(async (options: { since?: string; force?: boolean }, command: Command) => {
    try {
      const logger = createConsoleLogger();
      const configuration = { ...configurationOf(command, commandSchemas.rejudge, logger), since: options.since, force: options.force === true };
      const result = await runRejudgeCommand(configuration, logger);
      process.stdout.write(configuration.json ? `${JSON.stringify(result)}\n` : `judged ${result.judged}, skipped ${result.skipped}, failed ${result.failed}\n`);
      if (result.failed > 0) process.exitCode = 1;
    } catch (error) {
      fail(error);
    }
  });

addOptions(program.command('samples').description('training samples').command('export').description('write samples as JSON lines'), commandSchemas.samplesExport)
  .requiredOption('--out <file>', 'the JSONL file to write')
  .option('--status <status>', 'ready | trained | dropped (default: all)')
  .option('--with-turns', "add each sample's turn text: the request messages, the reply and the next state")
  .action(async (options: { out: string; status?: string; withTurns?: boolean }, command: Command) => {
    try {
      if (options.status !== undefined && !['ready', 'trained', 'dropped'].includes(options.status)) {
        throw new ClawrlError('configuration_error', `--status must be ready, trained or dropped, got ${options.status}.`);
      }
      const configuration = configurationOf(command, commandSchemas.samplesExport, undefined);
      const written = await runSamplesExportCommand({
        data: configuration.data,
        store: configuration.store,
        storeUrl: configuration.storeUrl,
        out: options.out,
        status: options.status as 'ready' | 'trained' | 'dropped' | undefined,
        withTurns: options.withTurns === true,
      });
      process.stdout.write(configuration.json ? `${JSON.stringify({ written, out: options.out })}\n` : `wrote ${written} samples to ${options.out}\n`);
    } catch (error) {
      fail(error);
    }
  });

addOptions(program.command('redact').description('redact stdin to stdout by the rules the server keeps turns by (--json: the spans, their kinds and offsets; docs/operations.md)'), commandSchemas.redact).action(
  async (_options: unknown, command: Command) => {
    try {
      const configuration = configurationOf(command, commandSchemas.redact, undefined);
      const result = redactWithRules(await readStandardInput(), configuration.redact);
      process.stdout.write(configuration.json ? `${JSON.stringify(result)}\n` : result.text);
    } catch (error) {
      fail(error);
    }
  },
);

addEvalCommands(program);

const queueHelp: Record<string, string> = {
  bus: 'memory | nats: the queue of tasks and results (memory only with --workers, in this one process)',
  url: 'the clawrl server the rollouts run through and the appraisals go to (default: as clawrl status finds it)',
  apiKey: 'key sent to the server (the first, if repeated; "tenant=key" sends key)',
  adminKey: 'admin key: the manager reads a turn\'s feedback through the admin routes, so a redelivered result is not appraised twice',
  maxTokens: 'max_tokens of each rollout request',
  temperature: 'temperature of each rollout request (default: the server\'s)',
};

addOptions(
  program.command('manager').description('publish an environment\'s tasks on the bus, appraise the workers\' results and post the appraisals as feedback (docs/environments.md)'),
  commandSchemas.manager,
  { ...queueHelp, judge: 'verifier | rules | openai: what appraises a result (default: the environment\'s verifier; openai needs --judge-url and --judge-model)' },
).action(async (_options: unknown, command: Command) => {
  try {
    const logger = createConsoleLogger();
    const configuration = configurationOf(command, commandSchemas.manager, logger);
    const running = await startManagerProcess(configuration, serverUrlOf(command, configuration.url), logger);
    runUntilSignal(running, running.readyLine, logger);
  } catch (error) {
    fail(error);
  }
});

addOptions(
  program.command('worker').description('take an environment\'s tasks from the bus, solve each through a clawrl server, publish the results (docs/environments.md)'),
  commandSchemas.worker,
  queueHelp,
).action(async (_options: unknown, command: Command) => {
  try {
    const logger = createConsoleLogger();
    const configuration = configurationOf(command, commandSchemas.worker, logger);
    const running = await startWorkerProcess(configuration, serverUrlOf(command, configuration.url), logger);
    runUntilSignal(running, configuration.json ? JSON.stringify({ ready: 'worker', environment: configuration.env }) : 'clawrl ready worker', logger);
  } catch (error) {
    fail(error);
  }
});
addOptions(
  program.command('rollout').description('group rollouts of an environment through a clawrl server, trained with GRPO (docs/environments.md)'),
  rolloutSchema,
  rolloutHelp,
)
  .requiredOption('--env <name|module>', 'arithmetic | tool-calc | terminal, or a module exporting an EnvironmentDefinition (./my-env.js)')
  .option('--group <n>', 'rollouts per task (the GRPO group)', '8')
  .option('--tasks-per-step <n>', 'training tasks per step', '4')
  .option('--parallel <n>', 'rollouts in flight at once', '4')
  .option('--steps <n>', 'training steps', '30')
  .option('--eval-every <k>', 'held-out accuracy every k steps (0: only the base and the end)', '5')
  .option('--eval-size <n>', 'held-out tasks per accuracy measure', '50')
  .option('--seed <n>', 'seed of the tasks and of sampling', '1')
  .option('--reward <mode>', "outcome | outcome+process: the verifier's outcome alone, or plus the PRM's mean vote per turn", 'outcome')
  .option('--normalize-std', "the server it starts divides group advantages by the group's standard deviation (recipe groupNormalizeStd; with --url that server's recipe decides)")
  .option('--eval-temperature <t>', "temperature of the held-out episodes only, 0 for greedy (default: the rollouts', --temperature)")
  .option('--out <dir>', 'write rollout-<env>-seed<seed>.json and accuracy.svg (charting every result in the folder)')
  .action(async (options: RolloutCommandOptions, command: Command) => {
    try {
      const flags = typedFlags(command, rolloutSchema);
      const configFile = (typeof flags.config === 'string' ? flags.config : undefined) ?? process.env.CLAWRL_CONFIG;
      const file = readConfigFile(configFile);
      const { configuration } = resolveConfiguration(rolloutSchema, { flags, file, environment: process.env });
      const explicitKeys = explicitKeysOf(flags, file, process.env, rolloutSchema);
      const result = await runRolloutCommand({ options, configuration, explicitKeys, configFile, environment: process.env, cwd: process.cwd() });
      process.stdout.write(`${configuration.json ? JSON.stringify(result, null, 2) : formatRolloutResult(result)}\n`);
    } catch (error) {
      fail(error);
    }
  });

const policy = program.command('policy').description('policy versions of a running server');
addOptions(
  policy
    .command('list')
    .description('list versions, the base first; * marks each lineage\'s active one')
    .option('--user <user>', "one user's lineage (tenant/name, with --policy-scope user); an empty value lists the global lineage"),
  commandSchemas.client,
).action(
  async (options: { user?: string }, command: Command) => {
    try {
      const configuration = configurationOf(command, commandSchemas.client, undefined);
      const policies = await listPolicies(serverUrlOf(command, configuration.url), configuration.adminKey, options.user);
      process.stdout.write(`${configuration.json ? JSON.stringify(policies, null, 2) : formatPolicies(policies)}\n`);
    } catch (error) {
      fail(error);
    }
  },
);
addOptions(policy.command('activate').description("serve this version from now on (roll back or forward); a user's version replaces only that user's").argument('<version>'), commandSchemas.client).action(
  async (version: string, _options: unknown, command: Command) => {
    try {
      const configuration = configurationOf(command, commandSchemas.client, undefined);
      const result = await activatePolicy(serverUrlOf(command, configuration.url), configuration.adminKey, version);
      process.stdout.write(configuration.json ? `${JSON.stringify(result)}\n` : `serving policy version ${version}\n`);
    } catch (error) {
      fail(error);
    }
  },
);

const data = program.command('data').description('records of a running server');
addOptions(
  data.command('delete').description('erase a session, a tenant or a period with everything derived from it, and print the receipt'),
  commandSchemas.client,
)
  .option('--session <id>', 'the session to erase')
  .option('--user <tenant/name>', "the user whose sessions, turns and feedback to erase (a key's user: tenant/name, or the tenant for a tenant=key)")
  .option('--tenant <name>', 'the tenant whose records to erase, every user of its keys')
  .option('--before <date>', 'erase every turn started before this ISO date or epoch milliseconds')
  .action(async (options: DataDeleteOptions, command: Command) => {
    try {
      const configuration = configurationOf(command, commandSchemas.client, undefined);
      const receipt = await requestErasure(serverUrlOf(command, configuration.url), configuration.adminKey, options);
      process.stdout.write(`${configuration.json ? JSON.stringify(receipt, null, 2) : formatReceipt(receipt)}\n`);
    } catch (error) {
      fail(error);
    }
  });

await program.parseAsync(process.argv);
