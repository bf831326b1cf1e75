import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEventBusContract } from '../event-bus.contract.js';
import { createNatsEventBus } from './create-nats-event-bus.js';
import { natsSubjectOf } from './nats-event-stream.js';
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

runEventBusContract({
  name: 'nats',
  ackWaitMs,
  async createFixture() {
    const streamName = uniqueTestName('clawrl_test');
    const subjectPrefix = streamName;
    return {
      openBus: ({ logger }) => createNatsEventBus({ servers: testNatsUrl, streamName, subjectPrefix, ackWaitMs, logger }),
      publishRaw: async (event, data) => {
        await jetstream(admin.connection).publish(natsSubjectOf(subjectPrefix, event), data);
      },
      destroy: async () => {
        await admin.manager.streams.delete(streamName).catch(() => false);
      },
    };
  },
});

describe('nats event bus', () => {
  it('creates the stream with one subject per event, file storage and limits retention', async () => {
    const streamName = uniqueTestName('clawrl_test');
    const bus = await createNatsEventBus({ servers: testNatsUrl, streamName, subjectPrefix: 'app_one', ackWaitMs });
    try {
      const info = await admin.manager.streams.info(streamName);
      expect(info.config.subjects.sort()).toEqual(['app_one.policy.published', 'app_one.sample.available', 'app_one.turn.recorded', 'app_one.turn.scored']);
      expect(info.config.storage).toBe('file');
      expect(info.config.retention).toBe('limits');
    } finally {
      await bus.close();
      await admin.manager.streams.delete(streamName);
    }
  });

  it('updates an existing durable consumer to a new ack wait', async () => {
    const streamName = uniqueTestName('clawrl_test');
    const first = await createNatsEventBus({ servers: testNatsUrl, streamName, subjectPrefix: streamName, ackWaitMs });
    const second = await createNatsEventBus({ servers: testNatsUrl, streamName, subjectPrefix: streamName, ackWaitMs: 2 * ackWaitMs });
    try {
      for (const [bus, expected] of [[first, ackWaitMs], [second, 2 * ackWaitMs]] as const) {
        await bus.publish('policy-published', { version: 1 });
        for await (const message of bus.subscribe('policy-published', { consumer: 'serving' })) {
          await message.ack();
          break;
        }
        const info = await admin.manager.consumers.info(streamName, 'policy-published_serving');
        expect(info.config.ack_wait).toBe(expected * 1_000_000);
      }
    } finally {
      await Promise.all([first.close(), second.close()]);
      await admin.manager.streams.delete(streamName);
    }
  });

  it('fails with a clear, retryable error when NATS is unreachable', async () => {
    const error: unknown = await createNatsEventBus({ servers: 'nats://127.0.0.1:1' }).then(
      () => null,
      (rejection: unknown) => rejection,
    );
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true });
    expect(String(error)).toMatch(/cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });
});
