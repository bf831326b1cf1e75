/**
 * `clawrl manager`: publishes a run of an environment's tasks on the bus (`tasks.<env>`), reads
 * the workers' results (`results.<env>`) through the run's durable consumer, appraises each with
 * the environment's verifier (or a judge, `--judge rules|openai`), and posts the appraisal as
 * feedback on the result's last turn at the server (`--url`). It runs until stopped, like the
 * other services: a manager killed and started again with the same flags resumes the run, and
 * publishes none of its tasks twice (docs/environments.md, "Bus topics").
 *
 * With `--workers <n>` it also runs workers in its own process, which is what `--bus memory`
 * needs: an in-memory queue reaches no other process.
 */
import { hostname } from 'node:os';
import type { z } from 'zod';
import { createJudgeAppraiser, createVerifierAppraiser, type AppraiseResult } from '../../rollouts/manager-worker/appraise-result.js';
import { createGatewayFeedbackClient } from '../../rollouts/manager-worker/gateway-feedback-client.js';
import { startManager, type AppraisalRecord } from '../../rollouts/manager-worker/run-manager.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentDefinition } from '../../spec/environment.js';
import type { Logger } from '../../spec/logger.js';
import type { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { createJudge } from '../wiring/create-judge.js';
import { createShutdownStack } from '../wiring/create-shutdown-stack.js';
import { clientKeyOf } from './eval-command.js';
import { openTaskQueue } from '../wiring/open-task-queue.js';
import { formatResultLine, openEnvironmentAndServer, startBusWorkers } from './worker-command.js';

export type ManagerCommandConfiguration = Resolved<z.infer<typeof commandSchemas.manager>>;

export function runNameOf(configuration: Pick<ManagerCommandConfiguration, 'run' | 'split' | 'seed' | 'tasks'>, environment: string): string {
  return configuration.run ?? `${environment}-${configuration.split}-s${configuration.seed}-n${configuration.tasks}`.slice(0, 64);
}

function appraiserOf(configuration: ManagerCommandConfiguration, definition: EnvironmentDefinition): AppraiseResult {
  if (configuration.judge === 'verifier') return createVerifierAppraiser(definition);
  const judge = createJudge(
    {
      judge: configuration.judge,
      judgeUrl: configuration.judgeUrl,
      judgeModel: configuration.judgeModel,
      judgeRules: configuration.judgeRules,
      judgeWeights: 'base',
      // Only `--judge policy` reads the model, and the manager has no engine to judge with.
      model: configuration.judgeModel ?? '',
    },
    undefined,
  );
  return createJudgeAppraiser(definition, judge);
}

export function formatAppraisalLine(record: AppraisalRecord): string {
  const verdict = record.correct === null ? '' : record.correct ? ', solved' : ', not solved';
  return `appraised ${record.taskId} (session ${record.sessionId}, worker ${record.worker}): reward ${record.reward} by ${record.appraiser}${verdict}; ${record.appraised} of ${record.tasks} tasks in this process`;
}

export interface RunningManagerProcess {
  /** The ready line: what the run published. */
  readyLine: string;
  close(): Promise<void>;
}

export async function startManagerProcess(configuration: ManagerCommandConfiguration, url: string, logger: Logger): Promise<RunningManagerProcess> {
  if (configuration.bus === 'memory' && configuration.workers === 0) {
    throw new ClawrlError('configuration_error', 'With --bus memory no other process reaches the queue: give --workers <n> to run workers here, or use --bus nats --bus-url <url>.', { param: 'workers' });
  }
  const { definition, client } = await openEnvironmentAndServer(configuration, url, logger);
  const appraise = appraiserOf(configuration, definition);
  const run = runNameOf(configuration, definition.name);
  const tasks = definition.taskSource.tasks({ split: configuration.split, count: configuration.tasks, seed: configuration.seed });
  const parts = createShutdownStack(logger);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const queue = parts.add(await openTaskQueue(configuration, logger, 'clawrl-manager'), (opened) => opened.close());
    if (configuration.bus === 'memory') {
      // Nothing else holds the event loop open when the in-memory queue is idle (its timers are
      // unref'd, and no socket is open between requests): without this the process would end
      // by itself, with results waiting out a retry delay still in memory.
      const keepAlive = setInterval(() => undefined, 60_000);
      parts.add(keepAlive, async (timer) => clearInterval(timer));
    }
    const manager = parts.add(
      await startManager({
        queue,
        environment: definition,
        run,
        tasks,
        appraise,
        gateway: createGatewayFeedbackClient({ url, apiKey: clientKeyOf(configuration.apiKey), adminKey: configuration.adminKey }),
        logger,
        onAppraisal: (record) => print(configuration.json ? JSON.stringify(record) : formatAppraisalLine(record)),
      }),
      (started) => started.close(),
    );
    const names = Array.from({ length: configuration.workers }, (_, index) => `manager-${hostname()}-${process.pid}-${index}`);
    startBusWorkers(parts, names, { queue, definition, client, configuration, logger, onResult: (result, duplicate) => logger.info(formatResultLine(result, duplicate)) });
    const { published, duplicates } = manager.published;
    const readyLine = configuration.json
      ? JSON.stringify({ ready: 'manager', run, environment: definition.name, tasks: tasks.length, published, duplicates })
      : `clawrl ready manager run=${run} environment=${definition.name} tasks=${tasks.length} published=${published} duplicates=${duplicates}`;
    return { readyLine, close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}
