/**
 * The behaviour every `TaskQueue` implementation must show (the delivery contract in
 * `src/spec/task-queue.ts`). It talks to queues only through the seam, plus one raw hook that
 * puts bytes on a topic the way a buggy or foreign publisher would.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../spec/logger.js';
import type { QueueMessage, QueuePayload, TaskQueue } from '../spec/task-queue.js';
import { deliveryTimeoutMs, expectClawrlError, rejectionOf, within } from './event-bus.contract.js';

/** One isolated broker world per test: every queue it opens shares the same durable state. */
export interface TaskQueueFixture {
  /** Opens a queue (a new client) with the ack wait given in the contract options. */
  openQueue(options: { logger: Logger }): Promise<TaskQueue>;
  /** Publishes raw bytes on `topic`, bypassing validation. */
  publishRaw(topic: string, data: Uint8Array): Promise<void>;
  /** Releases the world; runs after every queue of the test is closed. */
  destroy(): Promise<void>;
}

export interface TaskQueueContractOptions {
  name: string;
  createFixture: () => Promise<TaskQueueFixture>;
  /** The ack wait the fixture's queues use; keep it short (about a second), tests wait for it. */
  ackWaitMs: number;
}

interface Reader {
  next(): Promise<QueueMessage>;
  /** Resolves with the next message, or null when none comes within `milliseconds`. */
  nextWithin(milliseconds: number): Promise<QueueMessage | null>;
  ended(): Promise<boolean>;
  stop(): void;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

export function runTaskQueueContract(options: TaskQueueContractOptions): void {
  describe(`TaskQueue contract: ${options.name}`, () => {
    let fixture: TaskQueueFixture;
    let queues: TaskQueue[];
    let readers: Reader[];
    let warnings: Record<string, unknown>[];
    const logger: Logger = {
      info() {},
      warn(_message, fields) {
        warnings.push(fields ?? {});
      },
      error(_message, fields) {
        warnings.push(fields ?? {});
      },
    };

    beforeEach(async () => {
      queues = [];
      readers = [];
      warnings = [];
      fixture = await options.createFixture();
    });

    afterEach(async () => {
      for (const reader of readers) reader.stop();
      await Promise.all(queues.map((queue) => queue.close()));
      await fixture.destroy();
    });

    async function openQueue(): Promise<TaskQueue> {
      const queue = await fixture.openQueue({ logger });
      queues.push(queue);
      return queue;
    }

    function read(queue: TaskQueue, topic: string, consumer: string): Reader {
      const controller = new AbortController();
      const iterator = queue.consume(topic, { consumer, signal: controller.signal })[Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<QueueMessage>> | null = null;
      const step = () => (pending ??= iterator.next());
      const reader: Reader = {
        async next() {
          const result = await within(step(), deliveryTimeoutMs, `a message on ${topic} for ${consumer}`);
          pending = null;
          if (result.done) throw new Error(`the ${topic} subscription of ${consumer} ended while a message was expected`);
          return result.value;
        },
        async nextWithin(milliseconds) {
          const result = await Promise.race([step(), sleep(milliseconds).then(() => null)]);
          if (result === null) return null;
          pending = null;
          if (result.done) throw new Error(`the ${topic} subscription of ${consumer} ended while a message was expected`);
          return result.value;
        },
        async ended() {
          const result = await within(step(), deliveryTimeoutMs, `the end of the ${topic} subscription of ${consumer}`);
          pending = null;
          return result.done === true;
        },
        stop: () => controller.abort(),
      };
      readers.push(reader);
      return reader;
    }

    async function publishTasks(queue: TaskQueue, topic: string, ids: string[]): Promise<void> {
      for (const id of ids) await queue.publish(topic, { task: id });
    }

    async function readTasks(reader: Reader, count: number): Promise<string[]> {
      const ids: string[] = [];
      for (let index = 0; index < count; index += 1) {
        const message = await reader.next();
        ids.push(String(message.payload['task']));
        await message.ack();
      }
      return ids;
    }

    it('delivers JSON objects in publish order, and keeps topics apart', async () => {
      const queue = await openQueue();
      const task: QueuePayload = { task: 't1', data: { numbers: [1, 2.5], nested: { ok: true, none: null } } };
      await queue.publish('tasks.arithmetic', task);
      await queue.publish('tasks.tool-calc', { task: 'other' });
      await queue.publish('tasks.arithmetic', { task: 't2' });
      const reader = read(queue, 'tasks.arithmetic', 'workers');
      const first = await reader.next();
      expect(first.payload).toEqual(task);
      expect(first.redeliveryCount).toBe(0);
      await first.ack();
      expect(await readTasks(reader, 1)).toEqual(['t2']);
      expect(await readTasks(read(queue, 'tasks.tool-calc', 'workers'), 1)).toEqual(['other']);
    });

    it('rejects a bad topic, message id, payload or consumer name', async () => {
      const queue = await openQueue();
      for (const topic of ['', 'Tasks.x', 'tasks..x', 'tasks.*', 'tasks.>', 'tasks x', 'tasks_x']) {
        expectClawrlError(await rejectionOf(queue.publish(topic, { task: 't1' })), 'invalid_request');
        expect(() => queue.consume(topic, { consumer: 'workers' })).toThrow(/topic/);
      }
      expectClawrlError(await rejectionOf(queue.publish('tasks.x', { task: 't1' }, { id: 'has space' })), 'invalid_request');
      expectClawrlError(await rejectionOf(queue.publish('tasks.x', [1, 2] as unknown as QueuePayload)), 'invalid_request');
      expect(() => queue.consume('tasks.x', { consumer: 'has.dot' })).toThrow(/consumer/);
    });

    it('shares the work between subscribers of one consumer name, and fans out across names', async () => {
      const queue = await openQueue();
      const other = await openQueue();
      await publishTasks(queue, 'tasks.x', ['t1', 't2', 't3']);
      const first = read(queue, 'tasks.x', 'workers');
      const held = await first.next();
      const rest = await readTasks(read(other, 'tasks.x', 'workers'), 2);
      expect([String(held.payload['task']), ...rest].sort()).toEqual(['t1', 't2', 't3']);
      await held.ack();
      expect(await readTasks(read(other, 'tasks.x', 'audit'), 3)).toEqual(['t1', 't2', 't3']);
    });

    it('drops a second message with an id the topic already accepted', async () => {
      const queue = await openQueue();
      expect(await queue.publish('results.x', { task: 't1' }, { id: 'run-1/t1' })).toEqual({ duplicate: false });
      expect(await queue.publish('results.x', { task: 't1-again' }, { id: 'run-1/t1' })).toEqual({ duplicate: true });
      // Ids are per topic, and a message without one is never a duplicate.
      expect(await queue.publish('tasks.x', { task: 'same id, other topic' }, { id: 'run-1/t1' })).toEqual({ duplicate: false });
      await queue.publish('results.x', { task: 't2' });
      await queue.publish('results.x', { task: 't2' });
      const restarted = await openQueue();
      expect(await restarted.publish('results.x', { task: 't1-after-restart' }, { id: 'run-1/t1' })).toEqual({ duplicate: true });
      const reader = read(restarted, 'results.x', 'manager');
      expect(await readTasks(reader, 3)).toEqual(['t1', 't2', 't2']);
      expect(await reader.nextWithin(options.ackWaitMs)).toBeNull();
    });

    it('redelivers a nakked message, and one whose subscriber died, after the ack wait', async () => {
      const crashed = await openQueue();
      await publishTasks(crashed, 'tasks.x', ['t1', 't2']);
      const reader = read(crashed, 'tasks.x', 'workers');
      const nakked = await reader.next();
      await nakked.nak();
      const again = await reader.next();
      expect(again.payload['task']).toBe('t1');
      expect(again.redeliveryCount).toBe(1);
      await again.ack();
      const held = await reader.next();
      expect(held.payload['task']).toBe('t2');
      await crashed.close();
      expectClawrlError(await rejectionOf(held.ack()));
      expectClawrlError(await rejectionOf(held.working()));
      const restarted = await openQueue();
      const redelivered = await read(restarted, 'tasks.x', 'workers').next();
      expect(redelivered.payload['task']).toBe('t2');
      expect(redelivered.redeliveryCount).toBeGreaterThanOrEqual(1);
      await redelivered.ack();
    });

    it('keeps a message from other subscribers past the ack wait while its subscriber calls working()', async () => {
      const queue = await openQueue();
      const other = await openQueue();
      await publishTasks(queue, 'tasks.x', ['t1']);
      const held = await read(queue, 'tasks.x', 'workers').next();
      const waiting = read(other, 'tasks.x', 'workers');
      for (let beat = 0; beat < 6; beat += 1) {
        await sleep(options.ackWaitMs / 2);
        await held.working();
      }
      // Three ack waits have passed; without working() the message would have gone to the other subscriber.
      expect(await waiting.nextWithin(options.ackWaitMs / 4)).toBeNull();
      await held.ack();
      await held.working(); // settled: a no-op
      await publishTasks(queue, 'tasks.x', ['t2']);
      expect(await readTasks(waiting, 1)).toEqual(['t2']);
    });

    it('keeps a durable consumer position across queue instances', async () => {
      const publisher = await openQueue();
      await publishTasks(publisher, 'results.x', ['r1', 'r2', 'r3']);
      const before = await openQueue();
      expect(await readTasks(read(before, 'results.x', 'manager'), 2)).toEqual(['r1', 'r2']);
      await before.close();
      const after = await openQueue();
      expect(await readTasks(read(after, 'results.x', 'manager'), 1)).toEqual(['r3']);
      expect(await readTasks(read(after, 'results.x', 'late-joiner'), 1)).toEqual(['r1']);
    });

    it('settles, reports and skips messages that are not JSON objects', async () => {
      const queue = await openQueue();
      const encoder = new TextEncoder();
      await fixture.publishRaw('results.x', encoder.encode('{not json'));
      await fixture.publishRaw('results.x', encoder.encode('[1,2]'));
      await fixture.publishRaw('results.x', new Uint8Array([0xff, 0xfe]));
      await publishTasks(queue, 'results.x', ['r1']);
      expect(await readTasks(read(queue, 'results.x', 'manager'), 1)).toEqual(['r1']);
      expect(warnings).toHaveLength(3);
      expect(warnings.every((fields) => fields['topic'] === 'results.x')).toBe(true);
    });

    it('ends open subscriptions on close, rejects later publishes, and closes idempotently', async () => {
      const queue = await openQueue();
      const ended = read(queue, 'tasks.x', 'workers').ended();
      await queue.close();
      expect(await ended).toBe(true);
      await queue.close();
      expectClawrlError(await rejectionOf(queue.publish('tasks.x', { task: 't1' })));
    });
  });
}
