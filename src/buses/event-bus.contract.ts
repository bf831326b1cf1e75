/**
 * The behaviour every `EventBus` implementation must show (the delivery contract in
 * `src/spec/event-bus.ts`). It talks to buses only through the seam, plus one raw hook that puts
 * bytes on the wire the way a buggy or foreign publisher would.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { BusMessage, EventBus, EventName, EventPayloads } from '../spec/event-bus.js';
import type { Logger } from '../spec/logger.js';

/** One isolated broker world per test: every bus it opens shares the same durable state. */
export interface EventBusFixture {
  /** Opens a bus (a new client) with the ack wait given in the contract options. */
  openBus(options: { logger: Logger }): Promise<EventBus>;
  /** Publishes raw bytes as `event`, bypassing validation. */
  publishRaw(event: EventName, data: Uint8Array): Promise<void>;
  /** Releases the world; runs after every bus of the test is closed. */
  destroy(): Promise<void>;
}

export interface EventBusContractOptions {
  name: string;
  createFixture: () => Promise<EventBusFixture>;
  /** The ack wait the fixture's buses use; keep it short (about a second), tests wait for it. */
  ackWaitMs: number;
}

interface Warning {
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** A subscription read one message at a time, so a test can hold a message and never read the next. */
interface Reader<E extends EventName> {
  next(): Promise<BusMessage<EventPayloads[E]>>;
  /** Resolves true once the iteration has ended by itself (abort, close). */
  ended(): Promise<boolean>;
  stop(): void;
}

export const deliveryTimeoutMs = 10_000;

export function within<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${milliseconds} ms waiting for ${what}`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection, but the promise resolved'),
    (error: unknown) => error,
  );
}

export function expectClawrlError(error: unknown, code?: string): void {
  expect(ClawrlError.isInstance(error), `expected a ClawrlError, got ${String(error)}`).toBe(true);
  if (code) expect((error as ClawrlError).code).toBe(code);
}

export function runEventBusContract(options: EventBusContractOptions): void {
  describe(`EventBus contract: ${options.name}`, () => {
    let fixture: EventBusFixture;
    let buses: EventBus[];
    let readers: Reader<EventName>[];
    let warnings: Warning[];
    const logger: Logger = {
      info() {},
      warn(message, fields) {
        warnings.push({ message, fields });
      },
      error(message, fields) {
        warnings.push({ message, fields });
      },
    };

    beforeEach(async () => {
      buses = [];
      readers = [];
      warnings = [];
      fixture = await options.createFixture();
    });

    afterEach(async () => {
      for (const reader of readers) reader.stop();
      await Promise.all(buses.map((bus) => bus.close()));
      await fixture.destroy();
    });

    async function openBus(): Promise<EventBus> {
      const bus = await fixture.openBus({ logger });
      buses.push(bus);
      return bus;
    }

    function read<E extends EventName>(bus: EventBus, event: E, consumer: string, signal?: AbortSignal): Reader<E> {
      const controller = new AbortController();
      const iterator = bus
        .subscribe(event, { consumer, signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal })
        [Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<BusMessage<EventPayloads[E]>>> | null = null;
      const step = () => (pending ??= iterator.next());
      const reader: Reader<E> = {
        async next() {
          const result = await within(step(), deliveryTimeoutMs, `a ${event} message for consumer ${consumer}`);
          pending = null;
          if (result.done) throw new Error(`the ${event} subscription of ${consumer} ended while a message was expected`);
          return result.value;
        },
        async ended() {
          const result = await within(step(), deliveryTimeoutMs, `the end of the ${event} subscription of ${consumer}`);
          pending = null;
          return result.done === true;
        },
        stop: () => controller.abort(),
      };
      readers.push(reader as Reader<EventName>);
      return reader;
    }

    async function publishTurns(bus: EventBus, ids: string[]): Promise<void> {
      for (const id of ids) await bus.publish('turn-recorded', { turnId: id, sessionId: 's1' });
    }

    async function readTurnIds(reader: Reader<'turn-recorded'>, count: number, settle: 'ack' | 'none' = 'ack'): Promise<string[]> {
      const ids: string[] = [];
      for (let index = 0; index < count; index += 1) {
        const message = await reader.next();
        ids.push(message.payload.turnId);
        if (settle === 'ack') await message.ack();
      }
      return ids;
    }

    it('delivers published events with their payloads, in publish order', async () => {
      const bus = await openBus();
      await bus.publish('turn-recorded', { turnId: 't1', sessionId: 's1' });
      await bus.publish('turn-recorded', { turnId: 't2', sessionId: 's2' });
      const reader = read(bus, 'turn-recorded', 'judge');
      const first = await reader.next();
      expect(first.payload).toEqual({ turnId: 't1', sessionId: 's1' });
      expect(first.redeliveryCount).toBe(0);
      await first.ack();
      const second = await reader.next();
      expect(second.payload).toEqual({ turnId: 't2', sessionId: 's2' });
      await second.ack();
      await bus.publish('turn-recorded', { turnId: 't3', sessionId: 's1' });
      expect((await reader.next()).payload.turnId).toBe('t3');
    });

    it('keeps events apart: a consumer of one event never sees another', async () => {
      const bus = await openBus();
      await bus.publish('policy-published', { version: 3 });
      await bus.publish('sample-available', { sampleId: 'x1', policyVersion: 2 });
      await bus.publish('turn-scored', { turnId: 't1', score: -1 });
      const scored = await read(bus, 'turn-scored', 'worker').next();
      expect(scored.payload).toEqual({ turnId: 't1', score: -1 });
      const samples = await read(bus, 'sample-available', 'worker').next();
      expect(samples.payload).toEqual({ sampleId: 'x1', policyVersion: 2 });
      const policies = await read(bus, 'policy-published', 'worker').next();
      expect(policies.payload).toEqual({ version: 3 });
    });

    it('rejects a payload that fails its schema, and a bad consumer name', async () => {
      const bus = await openBus();
      const malformed = { turnId: 't1', score: 'high' } as unknown as EventPayloads['turn-scored'];
      expectClawrlError(await rejectionOf(bus.publish('turn-scored', malformed)), 'invalid_request');
      expectClawrlError(await rejectionOf(bus.publish('policy-published', { version: -1 })), 'invalid_request');
      expect(() => bus.subscribe('turn-recorded', { consumer: 'has.dot' })).toThrow(/consumer/);
      expect(() => bus.subscribe('turn-recorded', { consumer: '' })).toThrow(/consumer/);
    });

    it('fans out: every consumer name gets every message', async () => {
      const bus = await openBus();
      await publishTurns(bus, ['t1', 't2', 't3']);
      const judge = read(bus, 'turn-recorded', 'judge');
      const audit = read(bus, 'turn-recorded', 'audit');
      expect(await readTurnIds(judge, 3)).toEqual(['t1', 't2', 't3']);
      expect(await readTurnIds(audit, 3)).toEqual(['t1', 't2', 't3']);
    });

    it('shares the work between subscribers of one consumer name', async () => {
      const bus = await openBus();
      const other = await openBus();
      await publishTurns(bus, ['t1', 't2', 't3', 't4']);
      const first = read(bus, 'turn-recorded', 'judge');
      const held = await first.next();
      // The first subscriber sits on its message and asks for no more; the second gets the rest.
      const second = read(other, 'turn-recorded', 'judge');
      const rest = await readTurnIds(second, 3);
      expect([held.payload.turnId, ...rest].sort()).toEqual(['t1', 't2', 't3', 't4']);
      await held.ack();
      await publishTurns(bus, ['t5']);
      expect(await readTurnIds(second, 1)).toEqual(['t5']);
    });

    it('redelivers a nakked message, counting the redelivery', async () => {
      const bus = await openBus();
      await publishTurns(bus, ['t1']);
      const reader = read(bus, 'turn-recorded', 'judge');
      const first = await reader.next();
      await first.nak();
      await first.ack(); // already settled: a no-op, not an ack
      const again = await reader.next();
      expect(again.payload.turnId).toBe('t1');
      expect(again.redeliveryCount).toBe(1);
      await again.ack();
    });

    it('holds a message nakked with a delay back for that delay', async () => {
      const bus = await openBus();
      await publishTurns(bus, ['t1', 't2']);
      const reader = read(bus, 'turn-recorded', 'judge');
      const first = await reader.next();
      const nakkedAt = Date.now();
      await first.nak(options.ackWaitMs);
      expect(await readTurnIds(reader, 1)).toEqual(['t2']);
      const again = await reader.next();
      expect(again.payload.turnId).toBe('t1');
      expect(again.redeliveryCount).toBe(1);
      // A lower bound only: a slow machine delays redelivery further, never earlier.
      expect(Date.now() - nakkedAt).toBeGreaterThanOrEqual(options.ackWaitMs * 0.9);
      await again.ack();
    });

    it('redelivers after the ack wait when a subscriber dies without settling', async () => {
      const crashed = await openBus();
      await publishTurns(crashed, ['t1']);
      const held = await read(crashed, 'turn-recorded', 'judge').next();
      await crashed.close();
      expectClawrlError(await rejectionOf(held.ack()));
      const restarted = await openBus();
      const again = await read(restarted, 'turn-recorded', 'judge').next();
      expect(again.payload.turnId).toBe('t1');
      expect(again.redeliveryCount).toBeGreaterThanOrEqual(1);
      await again.ack();
    });

    it('keeps a durable consumer position across bus instances', async () => {
      const publisher = await openBus();
      await publishTurns(publisher, ['t1', 't2', 't3']);
      const before = await openBus();
      expect(await readTurnIds(read(before, 'turn-recorded', 'judge'), 2)).toEqual(['t1', 't2']);
      await before.close();
      await publishTurns(publisher, ['t4']);
      const after = await openBus();
      expect(await readTurnIds(read(after, 'turn-recorded', 'judge'), 2)).toEqual(['t3', 't4']);
      // A consumer name seen for the first time starts at the oldest retained message.
      expect(await readTurnIds(read(after, 'turn-recorded', 'late-joiner'), 1)).toEqual(['t1']);
    });

    it('settles, reports and skips malformed messages on the wire', async () => {
      const bus = await openBus();
      await fixture.publishRaw('turn-recorded', new TextEncoder().encode('{not json'));
      await fixture.publishRaw('turn-recorded', new TextEncoder().encode(JSON.stringify({ turnId: 7 })));
      await fixture.publishRaw('turn-recorded', new Uint8Array([0xff, 0xfe]));
      await publishTurns(bus, ['t1']);
      const reader = read(bus, 'turn-recorded', 'judge');
      expect(await readTurnIds(reader, 1)).toEqual(['t1']);
      expect(warnings).toHaveLength(3);
      expect(warnings.every((warning) => warning.fields?.['event'] === 'turn-recorded')).toBe(true);
      reader.stop();
      await bus.close();
      // Settled, not left to the ack wait: past it, a new client of the consumer still sees none of them again.
      await new Promise((resolve) => setTimeout(resolve, options.ackWaitMs * 1.5));
      const restarted = await openBus();
      await publishTurns(restarted, ['t2']);
      expect(await readTurnIds(read(restarted, 'turn-recorded', 'judge'), 1)).toEqual(['t2']);
      expect(warnings).toHaveLength(3);
    });

    it('ends the iteration when the signal aborts, and ignores an aborted signal up front', async () => {
      const bus = await openBus();
      const controller = new AbortController();
      const waiting = read(bus, 'turn-recorded', 'judge', controller.signal);
      const ended = waiting.ended();
      controller.abort();
      expect(await ended).toBe(true);
      const iteration = (async () => {
        const seen: unknown[] = [];
        for await (const message of bus.subscribe('turn-recorded', { consumer: 'judge', signal: AbortSignal.abort() })) seen.push(message);
        return seen;
      })();
      expect(await within(iteration, deliveryTimeoutMs, 'an aborted subscription to end')).toEqual([]);
      // The consumer is not disturbed: a later subscriber still gets the next message.
      await publishTurns(bus, ['t1']);
      expect(await readTurnIds(read(bus, 'turn-recorded', 'judge'), 1)).toEqual(['t1']);
    });

    it('ends open subscriptions on close, rejects later publishes, and closes idempotently', async () => {
      const bus = await openBus();
      const ended = read(bus, 'turn-recorded', 'judge').ended();
      await bus.close();
      expect(await ended).toBe(true);
      await bus.close();
      expectClawrlError(await rejectionOf(bus.publish('policy-published', { version: 1 })));
    });
  });
}
