import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryTaskQueue } from '../../buses/memory/create-memory-task-queue.js';
import { createMemoryEventBroker } from '../../buses/memory/memory-event-broker.js';
import { arithmeticEnvironment } from '../environments/arithmetic-environment.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentTask } from '../../spec/environment.js';
import { silentLogger } from '../../spec/logger.js';
import type { TaskQueue } from '../../spec/task-queue.js';
import { createVerifierAppraiser } from './appraise-result.js';
import type { FeedbackPost, GatewayFeedbackClient } from './gateway-feedback-client.js';
import { resultsTopicOf } from './rollout-queue-api.js';
import type { ResultMessage } from './rollout-queue-api.js';
import { startManager, type AppraisalRecord, type RunningManager } from './run-manager.js';
import { startWorker, type RunningWorker, type SolveTask } from './run-worker.js';

const ackWaitMs = 300;
const run = 'test-run';

interface FakeGateway extends GatewayFeedbackClient {
  feedback: Map<string, FeedbackPost[]>;
  /** Runs after a feedback is recorded and before the manager hears back. */
  afterPost?: () => Promise<void>;
}

function createFakeGateway(): FakeGateway {
  const gateway: FakeGateway = {
    feedback: new Map(),
    async postFeedback(post) {
      if (post.turnId.startsWith('unknown')) throw new ClawrlError('not_found', `No turn with id '${post.turnId}'.`);
      gateway.feedback.set(post.turnId, [...(gateway.feedback.get(post.turnId) ?? []), post]);
      await gateway.afterPost?.();
      return gateway.feedback.size;
    },
    async feedbackCount(turnId) {
      return gateway.feedback.get(turnId)?.length ?? 0;
    },
  };
  return gateway;
}

/** Answers correctly on even positions; each rollout is its own session and turn. */
const solveHalf: SolveTask = async ({ task }, sessionId) => {
  const position = Number(task.id.split('-').at(-1));
  const answer = Number(task.data['answer']) + (position % 2 === 0 ? 0 : 1);
  return { sessionId, turnIds: [`turn-${sessionId}`], outcome: { answer }, transcript: { turns: 1, toolCalls: 0, finalMessage: `The answer is ${answer}.`, finish: 'done' } };
};

let sessions = 0;
const createSessionId = () => `session-${(sessions += 1)}`;

describe('the manager/worker loop (memory queue)', () => {
  let broker = createMemoryEventBroker();
  const opened: TaskQueue[] = [];
  const running: (RunningManager | RunningWorker)[] = [];
  const openQueue = () => {
    const queue = createMemoryTaskQueue({ broker, ackWaitMs, logger: silentLogger });
    opened.push(queue);
    return queue;
  };
  const tasks: EnvironmentTask[] = arithmeticEnvironment.taskSource.tasks({ split: 'train', count: 4, seed: 7 });

  afterEach(async () => {
    for (const part of running.splice(0)) await part.close();
    for (const queue of opened.splice(0)) await queue.close();
    broker = createMemoryEventBroker();
  });

  async function appraisalsUntil(records: AppraisalRecord[], count: number): Promise<void> {
    for (let waited = 0; records.length < count; waited += 20) {
      if (waited > 10_000) throw new Error(`only ${records.length} of ${count} appraisals arrived`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('appraises each task of its run once, with the verifier on its own copy of the task', async () => {
    const gateway = createFakeGateway();
    const records: AppraisalRecord[] = [];
    const queue = openQueue();
    // A forged result comes first: its task copy claims the answer it gives.
    const forged = tasks[0] as EnvironmentTask;
    const forgedResult: ResultMessage = {
      run,
      environment: 'arithmetic',
      task: { ...forged, data: { ...forged.data, answer: 999 } },
      sessionId: 'forged',
      turnIds: ['turn-forged'],
      outcome: { answer: 999 },
      transcript: { turns: 1, toolCalls: 0, finalMessage: '999', finish: 'done' },
      worker: 'forger',
    };
    await queue.publish(resultsTopicOf('arithmetic'), forgedResult);
    await queue.publish(resultsTopicOf('arithmetic'), { ...forgedResult, run: 'another-run' });
    const appraise = createVerifierAppraiser(arithmeticEnvironment);
    running.push(await startManager({ queue, environment: arithmeticEnvironment, run, tasks, appraise, gateway, logger: silentLogger, onAppraisal: (record) => records.push(record) }));
    for (const name of ['a', 'b']) {
      running.push(startWorker({ queue: openQueue(), environment: 'arithmetic', solve: solveHalf, worker: name, logger: silentLogger, createSessionId }));
    }
    await appraisalsUntil(records, 4);
    await new Promise((resolve) => setTimeout(resolve, ackWaitMs * 2));
    expect(records).toHaveLength(4);
    expect(new Set(records.map((record) => record.taskId))).toEqual(new Set(tasks.map((task) => task.id)));
    const byTask = new Map(records.map((record) => [record.taskId, record]));
    expect(byTask.get(forged.id)).toMatchObject({ sessionId: 'forged', reward: 0, correct: false });
    expect(byTask.get(tasks[2]?.id as string)).toMatchObject({ reward: 1, correct: true });
    expect(byTask.get(tasks[3]?.id as string)).toMatchObject({ reward: 0, correct: false });
    expect([...gateway.feedback.values()].every((posts) => posts.length === 1)).toBe(true);
    expect(gateway.feedback.get('turn-forged')?.[0]?.text).toMatch(/expected \d+, found 999/);
    // The verifier's outcome reward, posted as a reward with its provenance: no score, no advantage,
    // and no group (each task is solved once), so the trainer takes it against the recipe's baseline.
    expect(gateway.feedback.get('turn-forged')?.[0]).toMatchObject({
      rollout: { run_id: run, environment: 'arithmetic', step: 0, group: null, turn_index: 0, outcome_reward: 0, process_reward: null, reward: 0 },
    });
    expect(Object.keys(gateway.feedback.get('turn-forged')?.[0] ?? {})).not.toContain('score');
  });

  it('gives the task of a worker that died holding it to another worker', async () => {
    const gateway = createFakeGateway();
    const records: AppraisalRecord[] = [];
    const queue = openQueue();
    const dyingQueue = openQueue();
    let took: () => void = () => undefined;
    const tookTask = new Promise<void>((resolve) => (took = resolve));
    // The first worker takes a task and never finishes it; then its connection goes.
    running.push(startWorker({ queue: dyingQueue, environment: 'arithmetic', solve: () => (took(), new Promise(() => undefined)), worker: 'dying', logger: silentLogger, createSessionId }));
    running.push(await startManager({ queue, environment: arithmeticEnvironment, run, tasks: tasks.slice(0, 2), appraise: createVerifierAppraiser(arithmeticEnvironment), gateway, logger: silentLogger, onAppraisal: (record) => records.push(record) }));
    await tookTask;
    await dyingQueue.close();
    running.push(startWorker({ queue: openQueue(), environment: 'arithmetic', solve: solveHalf, worker: 'alive', logger: silentLogger, createSessionId }));
    await appraisalsUntil(records, 2);
    expect(records.map((record) => record.worker)).toEqual(['alive', 'alive']);
  });

  it('resumes in a restarted manager, and never appraises a result twice when the last one died after its feedback', async () => {
    const gateway = createFakeGateway();
    const records: AppraisalRecord[] = [];
    const firstQueue = openQueue();
    const appraise = createVerifierAppraiser(arithmeticEnvironment);
    // The first manager dies right after its first feedback was recorded, before its ack.
    gateway.afterPost = async () => {
      gateway.afterPost = undefined;
      await firstQueue.close();
    };
    const first = await startManager({ queue: firstQueue, environment: arithmeticEnvironment, run, tasks, appraise, gateway, logger: silentLogger, onAppraisal: (record) => records.push(record) });
    running.push(first);
    running.push(startWorker({ queue: openQueue(), environment: 'arithmetic', solve: solveHalf, worker: 'a', logger: silentLogger, createSessionId }));
    await first.done;
    expect(gateway.feedback.size).toBe(1);
    const second = await startManager({ queue: openQueue(), environment: arithmeticEnvironment, run, tasks, appraise, gateway, logger: silentLogger, onAppraisal: (record) => records.push(record) });
    running.push(second);
    // The restarted manager publishes none of the run's tasks again.
    expect(second.published).toEqual({ published: 0, duplicates: 4 });
    await appraisalsUntil(records, 3);
    await new Promise((resolve) => setTimeout(resolve, ackWaitMs * 2));
    expect(records).toHaveLength(3);
    expect(gateway.feedback.size).toBe(4);
    expect([...gateway.feedback.values()].every((posts) => posts.length === 1)).toBe(true);
  });
});
