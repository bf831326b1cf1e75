/**
 * A record store that announces on the event bus what it has durably written: `turn-recorded`
 * after a main-line turn is committed (the gateway's write), `turn-scored` and `sample-available`
 * after a sample is committed (the judge worker's write). The services stay unaware of the bus.
 *
 * Publishing is best effort and never delays or fails the write: the store is the source of
 * truth and every consumer also polls it, so a lost event only costs latency.
 */
import type { EventBus, EventName, EventPayloads } from '../../spec/event-bus.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';

export function createEventPublishingStore(store: RecordStore, bus: EventBus, logger: Logger): RecordStore {
  function announce<E extends EventName>(event: E, payload: EventPayloads[E]): void {
    bus.publish(event, payload).catch((error: unknown) => {
      logger.warn('publishing an event failed; consumers will find the record by polling', { event, error: String(error) });
    });
  }

  const overrides: Partial<RecordStore> = {
    async recordTurn(turn) {
      const recorded = await store.recordTurn(turn);
      if (recorded.type === 'main') announce('turn-recorded', { turnId: recorded.id, sessionId: recorded.sessionId });
      return recorded;
    },
    async recordSample(sample) {
      const recorded = await store.recordSample(sample);
      if (recorded.score !== null) announce('turn-scored', { turnId: recorded.turnId, score: recorded.score });
      if (recorded.status === 'ready') announce('sample-available', { sampleId: recorded.id, policyVersion: recorded.policyVersion });
      return recorded;
    },
  };

  // Every other method is the store's own, bound to it: adapters may keep private state on `this`.
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof RecordStore];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...parameters: unknown[]) => unknown).bind(target) : value;
    },
  });
}
