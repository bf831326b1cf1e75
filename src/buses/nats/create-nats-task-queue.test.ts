import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTaskQueueContract } from '../task-queue.contract.js';
import { createNatsTaskQueue, natsQueueNamesOf } from './create-nats-task-queue.js';
import { ensureNatsStream } from './nats-event-stream.js';
import { connectToTestNats, testNatsUrl, uniqueTestName } from './testing/nats-test-server.js';
import type { NatsTestConnection } from './testing/nats-test-server.js';

const ackWaitMs = 1_000;
let admin: NatsTestConnection;

beforeAll(async () => {
  admin = await connectToTestNats();
});

afterAll(async () => {
  await admin?.connection.close();
});

/** Deletes every stream of a test's prefix (one per topic it used). */
async function deleteStreamsOf(prefix: string): Promise<void> {
  for await (const name of admin.manager.streams.names()) {
    if (name.startsWith(`${prefix}-queue-`)) await admin.manager.streams.delete(name).catch(() => false);
  }
}

runTaskQueueContract({
  name: 'nats',
  ackWaitMs,
  async createFixture() {
    const prefix = uniqueTestName('clawrl_test');
    return {
      openQueue: ({ logger }) => createNatsTaskQueue({ servers: testNatsUrl, prefix, ackWaitMs, logger }),
      publishRaw: async (topic, data) => {
        // The raw publisher may come first: create the topic's stream as a queue would.
        const { streamName, subject } = natsQueueNamesOf(prefix, topic);
        await ensureNatsStream(admin.manager, { name: streamName, subjects: [subject], maxMessagesPerSubject: 1_000_000 });
        await jetstream(admin.connection).publish(natsQueueNamesOf(prefix, topic).subject, data);
      },
      destroy: () => deleteStreamsOf(prefix),
    };
  },
});

describe('nats task queue', () => {
  it('keeps each topic in its own file-backed stream on the prefixed subject, with a duplicate window', async () => {
    const prefix = uniqueTestName('clawrl_test');
    const queue = await createNatsTaskQueue({ servers: testNatsUrl, prefix, duplicateWindowMs: 3_600_000 });
    try {
      await queue.publish('tasks.tool-calc', { task: 't1' }, { id: 'run/t1' });
      const names = natsQueueNamesOf(prefix, 'tasks.tool-calc');
      expect(names).toEqual({ streamName: `${prefix}-queue-tasks_tool-calc`, subject: `${prefix}.tasks.tool-calc` });
      const info = await admin.manager.streams.info(names.streamName);
      expect(info.config.subjects).toEqual([names.subject]);
      expect(info.config.storage).toBe('file');
      expect(info.config.duplicate_window).toBe(3_600_000 * 1_000_000);
      expect(info.state.messages).toBe(1);
    } finally {
      await queue.close();
      await deleteStreamsOf(prefix);
    }
  });
});
