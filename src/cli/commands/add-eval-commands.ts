/**
 * The `clawrl eval` commands: experiments and measurements (the personalization experiment, the
 * judge on held-out next states, the replay gate, agent prompts, redaction). Kept apart from
 * `main.ts` so the composition root stays readable; like it, it reads flags and `CLAWRL_*` variables.
 */
import { Option, type Command } from 'commander';
import { addOptions, configurationOf, readConfigFile, typedFlags } from '../configuration/command-options.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { addExperimentOptions, experimentKnobsOf } from '../configuration/personalize-recipe.js';
import { commandSchemas } from '../configuration/configuration-schema.js';
import { createConsoleLogger } from '../wiring/create-console-logger.js';
import { formatRedactionMeasurement } from '../../lab/redaction/measure-redaction.js';
import { formatJudgeHeldoutResult } from '../../lab/measure/measure-judge-heldout.js';
import { formatAgentPromptsMeasurement } from '../../lab/measure/measure-agent-prompts.js';
import { runEvalRedaction } from './redact-command.js';
import { runEvalJudgeCommand, type EvalJudgeOptions } from './eval-judge-command.js';
import { formatReplay, runEvalReplay, type EvalReplayOptions } from './eval-replay-command.js';
import { formatGateTrials, runGateTrialsCommand, type GateTrialsCommandOptions } from './eval-gate-trials-command.js';
import { runEvalAgentPromptsCommand, type EvalAgentPromptsOptions } from './eval-agent-prompts-command.js';
import { defaultMaxWaitMinutes, defaultPersonalizeSessions, explicitKeysOf, formatPersonalizeResult, personalizeHelp, personalizeSchema, runPersonalizeCommand, type PersonalizeCommandOptions } from './eval-command.js';
import { fail } from './fail.js';
import { serverUrlOf } from './server-url-of.js';

export function addEvalCommands(program: Command): void {
  const evalCommand = program.command('eval').description('experiments and measurements: the personalization experiment, the judge on held-out next states');
  addExperimentOptions(
    addOptions(
      evalCommand.command('personalize').description(
        'the personalization experiment: a simulated user with a hidden preference talks to clawrl while it trains (docs/personalization.md)',
      ),
      personalizeSchema,
      personalizeHelp,
    ),
  )
    .requiredOption('--user <user>', 'student | ta | teacher | path to a simulated-user JSON file; several, comma-separated (teacher,ta,student), talk to one server at once, each with its own key')
    .requiredOption('--method <method>', 'rl | opd | combine, or base: the untrained baseline (the server it starts never trains)')
    .option('--sessions <n>', 'sessions to run', String(defaultPersonalizeSessions))
    .option('--seed <n>', 'seed of the messages and replies', '1')
    .option('--out <dir>', 'write the result JSON and satisfaction.svg (charting every result file in the folder)')
    .option('--final-feedback', "send the user's reply to each session's last response as feedback text (POST /v1/feedback), so the last turn is judged too")
    .option('--max-wait <minutes>', `longest wait for the server after one session before the run stops waiting (default ${defaultMaxWaitMinutes})`)
    .option('--no-wait', 'do not wait after each session for the server to judge it and train (default: wait, as a user taking a break would)')
    .addOption(new Option('--probe-size <n>', 'held-out probe messages (default 50; fewer only for smoke tests)').hideHelp())
    .action(async (options: PersonalizeCommandOptions, command: Command) => {
      try {
        const flags = typedFlags(command, personalizeSchema);
        const configFile = (typeof flags.config === 'string' ? flags.config : undefined) ?? process.env.CLAWRL_CONFIG;
        const file = readConfigFile(configFile);
        const { configuration } = resolveConfiguration(personalizeSchema, { flags, file, environment: process.env });
        const explicitKeys = explicitKeysOf(flags, file, process.env);
        const knobs = experimentKnobsOf(command.opts());
        const results = await runPersonalizeCommand({ options, configuration, explicitKeys, knobs, configFile, environment: process.env });
        // One user prints its result; several users print theirs as a list.
        const printed = configuration.json ? JSON.stringify(results.length === 1 ? results[0] : results, null, 2) : results.map(formatPersonalizeResult).join('\n\n');
        process.stdout.write(`${printed}\n`);
      } catch (error) {
        fail(error);
      }
    });

  addOptions(
    evalCommand.command('judge').description("the judge the server would run, on held-out next states: majority-verdict accuracy overall and per kind, and the rows it gets wrong (docs/judging.md)"),
    commandSchemas.evalJudge,
  )
    .option('--heldout <file>', 'held-out next states, one JSON object a line (default: models/builtin-tiny/judge-heldout.jsonl)')
    .option('--limit <n>', 'judge only n rows, evenly spaced through the file')
    .option('--out <dir>', 'also write judge-heldout.json and judge-heldout.txt there')
    .action(async (options: EvalJudgeOptions, command: Command) => {
      try {
        const logger = createConsoleLogger();
        const configuration = configurationOf(command, commandSchemas.evalJudge, logger);
        const result = await runEvalJudgeCommand(configuration, options, logger);
        process.stdout.write(`${configuration.json ? JSON.stringify(result, null, 2) : formatJudgeHeldoutResult(result)}\n`);
      } catch (error) {
        fail(error);
      }
    });

  addOptions(
    evalCommand.command('replay').description("the replay gate's evaluation by hand on a running server: a version against another on held-out recorded turns, judged (docs/training.md)"),
    commandSchemas.client,
  )
    .requiredOption('--version <n>', 'the version to evaluate')
    .option('--against <m>', 'the version it is compared with (default: the active one)')
    .option('--sessions <k>', "held-out sessions replayed (default: the server's --gate-sessions)")
    .action(async (options: EvalReplayOptions, command: Command) => {
      try {
        const configuration = configurationOf(command, commandSchemas.client, undefined);
        const evidence = await runEvalReplay(serverUrlOf(command, configuration.url), configuration.adminKey, options);
        process.stdout.write(`${configuration.json ? JSON.stringify(evidence, null, 2) : formatReplay(evidence)}\n`);
      } catch (error) {
        fail(error);
      }
    });

  evalCommand
    .command('gate-trials')
    .description('the replay gate on poisoned (feedback sign flipped) and genuine candidates, each trial on a fresh `clawrl serve --gate replay` (docs/results.md)')
    .option('--user <user>', 'the simulated user giving feedback: student | ta | teacher | path/to/user.json', 'teacher')
    .option('--model <model>', 'the model the trial servers serve', 'builtin:tiny')
    .option('--trials <n>', 'trials of each kind', '10')
    .option('--sessions <n>', 'sessions of the user a trial records before its training step', '40')
    .option('--seed <n>', 'seed of the first trial (trial t uses seed + t)', '1')
    .option('--kinds <kinds>', 'poisoned,genuine or one of them', 'poisoned,genuine')
    .option('--held-out-share <fraction>', "the trial servers' --held-out-share", '0.25')
    .option('--json', 'print JSON')
    .option('--out <file>', 'also write the JSON result there')
    .action(async (options: GateTrialsCommandOptions) => {
      try {
        const result = await runGateTrialsCommand(options);
        process.stdout.write(`${options.json === true ? JSON.stringify(result, null, 2) : formatGateTrials(result)}\n`);
      } catch (error) {
        fail(error);
      }
    });

  addOptions(
    evalCommand.command('redaction').description('the redaction rules (--redact) on the labelled corpus the project generates: recall on planted secrets and personal data, false positives on look-alikes (docs/operations.md)'),
    commandSchemas.redact,
  )
    .option('--documents <n>', 'documents in the corpus', '1100')
    .option('--seed <n>', 'seed of the corpus', '1')
    .action(async (options: { documents: string; seed: string }, command: Command) => {
      try {
        const configuration = configurationOf(command, commandSchemas.redact, undefined);
        const result = runEvalRedaction(configuration.redact, Number(options.documents), options.seed);
        process.stdout.write(`${configuration.json ? JSON.stringify(result, null, 2) : formatRedactionMeasurement(result)}\n`);
      } catch (error) {
        fail(error);
      }
    });

  evalCommand
    .command('agent-prompts')
    .description("the built-in model on the first requests OpenClaw, Claude Code and Codex send, with 20 held-out arithmetic questions as the user's message, fitted to its window: the share of answers (not judge verdicts) and of right ones, against the same questions asked plainly (docs/builtin-model.md)")
    .option('--model-dir <dir>', 'the model folder to measure (default: models/builtin-tiny)')
    .option('--questions <n>', 'held-out arithmetic questions (default 20)')
    .option('--samples <n>', 'replies per question and prompt (default 1)')
    .option('--temperature <t>', 'sampling temperature (default 1)')
    .option('--clients <list>', 'comma-separated: openclaw, claude-code, codex (default: all three)')
    .option('--out <dir>', 'also write agent-prompts.json and agent-prompts.txt there')
    .option('--json', 'print the measurement as JSON')
    .action(async (options: EvalAgentPromptsOptions & { json?: boolean }) => {
      try {
        const result = await runEvalAgentPromptsCommand(options, (line) => process.stderr.write(`eval agent-prompts: ${line}\n`));
        process.stdout.write(`${options.json === true ? JSON.stringify(result, null, 2) : formatAgentPromptsMeasurement(result)}\n`);
      } catch (error) {
        fail(error);
      }
    });
}
