/**
 * The events' part of the store contract (`record-events.ts`): a store given an event sink
 * announces what it committed — `turn-recorded` for a main turn, `turn-scored` and
 * `sample-available` for a sample — nothing for other writes, and keeps the write when publishing
 * fails. `runRecordStoreContract` runs it with a recording sink, so every store does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventName, EventPayloads } from '../spec/event-bus.js';
import { silentLogger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import type { RecordEventsOptions } from './record-events.js';
import { judgement, newTurn, sample } from './testing/record-fixtures.js';

type Published = { [E in EventName]: { event: E; payload: EventPayloads[E] } }[EventName];

/** An event sink that keeps what is published, or refuses it once told to. */
export interface RecordingEvents {
  options: RecordEventsOptions;
  published: Published[];
  warnings: string[];
  /** From now on every publish rejects (`rejects`) or throws before returning a promise. */
  refuse(how: 'rejects' | 'throws'): void;
}

export function createRecordingEvents(): RecordingEvents {
  const published: Published[] = [];
  const warnings: string[] = [];
  let refusing: 'rejects' | 'throws' | null = null;
  return {
    published,
    warnings,
    refuse(how) {
      refusing = how;
    },
    options: {
      bus: {
        publish: (event, payload) => {
          if (refusing === 'throws') throw new Error('the bus is gone');
          if (refusing === 'rejects') return Promise.reject(new Error('the bus is closed'));
          published.push({ event, payload } as Published);
          return Promise.resolve();
        },
      },
      logger: { ...silentLogger, warn: (message) => warnings.push(message) },
    },
  };
}

export function runRecordEventsContract(current: () => { store: RecordStore; events: RecordingEvents }): void {
  describe('events', () => {
    let store: RecordStore;
    let events: RecordingEvents;
    const settled = () => new Promise((resolve) => setImmediate(resolve));

    beforeEach(async () => {
      ({ store, events } = current());
      await store.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
    });

    it('announce committed main turns and samples, and nothing else', async () => {
      await store.recordTurn(newTurn('side', { type: 'side', trainable: false }));
      await store.recordTurn(newTurn('t1'));
      await store.linkNextState('t1', [{ role: 'user', content: 'ok' }], 200);
      await store.recordFeedback({ turnId: 't1', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 210 });
      await store.recordJudgement(judgement('t1'));
      await store.recordSample(sample('ready', 't1', { policyVersion: 2 }));
      await store.recordSample(sample('dropped', 't1', { status: 'dropped', dropReason: 'no-score', score: null, lossMask: [], distillationGaps: null, teacherLogprobs: null, support: null }));
      await store.updateSampleStatus({ ids: ['ready'], status: 'dropped', reason: 'stale', at: 300 });
      await settled();
      expect(events.published).toEqual([
        { event: 'turn-recorded', payload: { turnId: 't1', sessionId: 's1' } },
        { event: 'turn-scored', payload: { turnId: 't1', score: 1 } },
        { event: 'sample-available', payload: { sampleId: 'ready', policyVersion: 2 } },
      ]);
    });

    it('announce nothing for a write that fails', async () => {
      await store.recordTurn(newTurn('t1'));
      await expect(store.recordTurn(newTurn('t1'))).rejects.toMatchObject({ code: 'store_error' });
      await expect(store.recordSample(sample('x', 'missing'))).rejects.toMatchObject({ code: 'store_error' });
      await settled();
      expect(events.published.map((published) => published.event)).toEqual(['turn-recorded']);
    });

    it('keep the write and warn when the bus refuses the event', async () => {
      events.refuse('rejects');
      await expect(store.recordTurn(newTurn('t1'))).resolves.toMatchObject({ id: 't1', index: 0 });
      events.refuse('throws');
      await expect(store.recordSample(sample('x', 't1'))).resolves.toMatchObject({ id: 'x', status: 'ready' });
      expect(await store.getTurn('t1')).not.toBeNull();
      await settled();
      expect(events.published).toEqual([]);
      expect(events.warnings).toEqual(Array(3).fill('publishing an event failed; consumers will find the record by polling'));
    });
  });
}
