import { runTaskQueueContract } from '../task-queue.contract.js';
import { createMemoryTaskQueue } from './create-memory-task-queue.js';
import { createMemoryEventBroker } from './memory-event-broker.js';

const ackWaitMs = 500;

runTaskQueueContract({
  name: 'memory',
  ackWaitMs,
  async createFixture() {
    const broker = createMemoryEventBroker();
    return {
      openQueue: async ({ logger }) => createMemoryTaskQueue({ broker, ackWaitMs, logger }),
      publishRaw: async (topic, data) => {
        broker.append(topic, data);
      },
      destroy: async () => {},
    };
  },
});
