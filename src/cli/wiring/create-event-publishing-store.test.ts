import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventBus } from '../../buses/memory/create-memory-event-bus.js';
import type { EventBus, EventName, EventPayloads } from '../../spec/event-bus.js';
import { silentLogger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { NewTurn } from '../../spec/records.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { createEventPublishingStore } from './create-event-publishing-store.js';

function turnOf(id: string, type: NewTurn['type']): NewTurn {
  return {
    id,
    sessionId: 's1',
    type,
    status: 'completed',
    trainable: true,
    tenant: null,
    model: 'policy',
    policyVersion: 0,
    messages: [{ role: 'user', content: `hello ${id}` }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1, 2, 3],
    responseTokenIds: [4, 5],
    logprobs: [-0.5, -0.25],
    response: { role: 'assistant', content: 'hi' },
    finishReason: 'stop',
    timings: { startedAt: 1_000, firstTokenAt: 1_001, endedAt: 1_002 },
    error: null,
    replyKey: null,
  };
}

/** The first `count` payloads of one event, acknowledged. */
async function received<E extends EventName>(bus: EventBus, event: E, count: number): Promise<Array<EventPayloads[E]>> {
  const payloads: Array<EventPayloads[E]> = [];
  if (count === 0) return payloads;
  for await (const message of bus.subscribe(event, { consumer: 'test' })) {
    payloads.push(message.payload);
    await message.ack();
    if (payloads.length === count) break;
  }
  return payloads;
}

describe('createEventPublishingStore', () => {
  let store: RecordStore;
  let bus: EventBus;

  afterEach(async () => {
    await bus.close();
    await store.close();
  });

  it('announces committed main turns and samples, and passes every other call through', async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    bus = createMemoryEventBus();
    const announcing = createEventPublishingStore(store, bus, silentLogger);
    await announcing.upsertSession({ id: 's1', tenant: null, at: 1 });
    await announcing.recordTurn(turnOf('t1', 'side'));
    await announcing.recordTurn(turnOf('t2', 'main'));
    const sample = {
      turnId: 't2',
      method: 'rl' as const,
      dropReason: null,
      policyVersion: 0,
      judgementId: null,
      feedbackId: null,
      score: 1,
      hint: null,
      group: null, lossMask: [1, 1],
      distillationGaps: null,
      teacherLogprobs: null,
      support: null,
      createdAt: 2,
    };
    await announcing.recordSample({ ...sample, id: 'sample-1', status: 'ready' });
    await announcing.recordSample({ ...sample, id: 'sample-2', status: 'dropped', dropReason: 'no-score', score: null });

    expect(await received(bus, 'turn-recorded', 1)).toEqual([{ turnId: 't2', sessionId: 's1' }]);
    expect(await received(bus, 'turn-scored', 1)).toEqual([{ turnId: 't2', score: 1 }]);
    expect(await received(bus, 'sample-available', 1)).toEqual([{ sampleId: 'sample-1', policyVersion: 0 }]);
    expect((await store.getTurn('t1'))?.type).toBe('side');
    expect((await announcing.counts()).turns).toMatchObject({ main: 1, side: 1 });
  });

  it('keeps the write when the bus refuses the event', async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    bus = createMemoryEventBus();
    await bus.close();
    const warnings: string[] = [];
    const announcing = createEventPublishingStore(store, bus, { ...silentLogger, warn: (message) => warnings.push(message) });
    await announcing.upsertSession({ id: 's1', tenant: null, at: 1 });
    await expect(announcing.recordTurn(turnOf('t1', 'main'))).resolves.toMatchObject({ id: 't1', index: 0 });
    expect(await store.getTurn('t1')).not.toBeNull();
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual(['publishing an event failed; consumers will find the record by polling']);
  });
});
