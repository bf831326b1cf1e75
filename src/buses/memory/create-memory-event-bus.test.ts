import { describe, expect, it } from 'vitest';
import { runEventBusContract } from '../event-bus.contract.js';
import { createMemoryEventBus } from './create-memory-event-bus.js';
import { createMemoryEventBroker } from './memory-event-broker.js';

const ackWaitMs = 500;

runEventBusContract({
  name: 'memory',
  ackWaitMs,
  async createFixture() {
    const broker = createMemoryEventBroker();
    return {
      openBus: async ({ logger }) => createMemoryEventBus({ broker, ackWaitMs, logger }),
      publishRaw: async (event, data) => {
        broker.append(event, data);
      },
      destroy: async () => {},
    };
  },
});

describe('memory event bus', () => {
  it('keeps only the newest messages of an event past its retention limit', async () => {
    const broker = createMemoryEventBroker({ maxMessagesPerEvent: 2 });
    const bus = createMemoryEventBus({ broker, ackWaitMs });
    for (const version of [1, 2, 3]) await bus.publish('policy-published', { version });
    const received: number[] = [];
    for await (const message of bus.subscribe('policy-published', { consumer: 'serving' })) {
      received.push(message.payload.version);
      await message.ack();
      if (received.length === 2) break;
    }
    expect(received).toEqual([2, 3]);
    await bus.close();
  });

  it('gives each bus without a broker its own private one', async () => {
    const first = createMemoryEventBus();
    const second = createMemoryEventBus();
    await first.publish('policy-published', { version: 1 });
    await second.publish('policy-published', { version: 2 });
    const iterator = second.subscribe('policy-published', { consumer: 'serving' })[Symbol.asyncIterator]();
    const result = await iterator.next();
    expect(result.done ? null : result.value.payload).toEqual({ version: 2 });
    await iterator.return?.();
    await Promise.all([first.close(), second.close()]);
  });
});
