/**
 * The in-process stand-in for a JetStream server: per-log (event or queue topic) logs, durable
 * consumer state, and the duplicate window of message ids.
 * It outlives the buses opened over it, so a bus closed and re-opened over the same broker
 * behaves like a client that disconnected and reconnected: durable consumers resume, and
 * messages it held unsettled come again after the ack wait.
 */
export interface MemoryEventBrokerOptions {
  /**
   * Retention: each event keeps its newest this-many messages (JetStream's limits retention with
   * a per-subject cap). A consumer that falls further behind skips the dropped ones. Default 10,000.
   */
  maxMessagesPerEvent?: number;
}

/** One delivery of one logged message to one subscriber of a consumer. */
export interface MemoryDelivery {
  sequence: number;
  data: Uint8Array;
  /** 1 on the first delivery. */
  deliveryCount: number;
}

/** A durable consumer's state: where it is in the log and which deliveries are unsettled. */
export interface MemoryConsumer {
  /**
   * The next message for one subscriber: a redelivery if one is due, else the next new message.
   * Waiting subscribers are served first come, first served, which is what shares the work.
   * Resolves null when `signal` aborts first.
   */
  next(ackWaitMs: number, signal: AbortSignal): Promise<MemoryDelivery | null>;
  /** Settles a message for good; a late or repeated ack is a no-op, as on JetStream. */
  ack(sequence: number): void;
  /** Makes an unsettled message due again after `delayMs`. */
  nak(sequence: number, delayMs: number): void;
  /** Restarts an unsettled, delivered message's ack wait (JetStream's in-progress ack); else a no-op. */
  touch(sequence: number, ackWaitMs: number): void;
}

/** Deduplication of one append: JetStream's `Nats-Msg-Id` and the stream's duplicate window. */
export interface MemoryDeduplication {
  id: string;
  windowMs: number;
}

export interface MemoryEventBroker {
  /**
   * Appends encoded bytes to a log (an event name or a queue topic). This is the wire: buses and
   * queues publish through it. Returns false, appending nothing, when `deduplication` names an id
   * the log accepted within its window.
   */
  append(log: string, data: Uint8Array, deduplication?: MemoryDeduplication): boolean;
  /** The durable consumer `name` of a log, created on first use at the oldest retained message. */
  consumer(log: string, name: string): MemoryConsumer;
}

interface EventLog {
  messages: Uint8Array[];
  /** Sequence of `messages[0]`; sequences start at 1 and never repeat. */
  firstSequence: number;
  consumers: Set<DurableConsumer>;
  /** When each deduplication id was accepted, oldest first (a Map keeps insertion order). */
  acceptedIds: Map<string, number>;
}

interface Waiter {
  ackWaitMs: number;
  resolve: (delivery: MemoryDelivery | null) => void;
}

export function createMemoryEventBroker(options: MemoryEventBrokerOptions = {}): MemoryEventBroker {
  const maxMessagesPerEvent = options.maxMessagesPerEvent ?? 10_000;
  const logs = new Map<string, EventLog>();
  const consumers = new Map<string, DurableConsumer>();

  function logOf(name: string): EventLog {
    let log = logs.get(name);
    if (!log) {
      log = { messages: [], firstSequence: 1, consumers: new Set(), acceptedIds: new Map() };
      logs.set(name, log);
    }
    return log;
  }

  return {
    append(name, data, deduplication) {
      const log = logOf(name);
      if (deduplication) {
        const now = Date.now();
        for (const [id, acceptedAt] of log.acceptedIds) {
          if (now - acceptedAt < deduplication.windowMs) break;
          log.acceptedIds.delete(id);
        }
        if (log.acceptedIds.has(deduplication.id)) return false;
        log.acceptedIds.set(deduplication.id, now);
      }
      log.messages.push(data);
      if (log.messages.length > maxMessagesPerEvent) {
        log.messages.shift();
        log.firstSequence += 1;
      }
      for (const consumer of log.consumers) consumer.dispatch();
      return true;
    },
    consumer(logName, name) {
      // Event names and topics contain no "_", so this key cannot collide across logs.
      const key = `${logName}_${name}`;
      let consumer = consumers.get(key);
      if (!consumer) {
        consumer = new DurableConsumer(logOf(logName));
        consumers.set(key, consumer);
      }
      return consumer;
    },
  };
}

class DurableConsumer implements MemoryConsumer {
  readonly #log: EventLog;
  /** The first sequence never delivered to this consumer. */
  #nextSequence: number;
  /** Delivery count of every unsettled message that has been delivered at least once. */
  readonly #deliveryCounts = new Map<number, number>();
  /** Unsettled messages waiting for a subscriber again (nak or ack-wait expiry). */
  readonly #due = new Set<number>();
  /** The ack-wait or nak-delay timer of each unsettled message. */
  readonly #timers = new Map<number, NodeJS.Timeout>();
  readonly #waiters: Waiter[] = [];

  constructor(log: EventLog) {
    this.#log = log;
    this.#nextSequence = log.firstSequence;
    log.consumers.add(this);
  }

  next(ackWaitMs: number, signal: AbortSignal): Promise<MemoryDelivery | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        ackWaitMs,
        resolve: (delivery) => {
          signal.removeEventListener('abort', onAbort);
          resolve(delivery);
        },
      };
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.dispatch();
    });
  }

  ack(sequence: number): void {
    this.#clearTimer(sequence);
    this.#due.delete(sequence);
    this.#deliveryCounts.delete(sequence);
  }

  nak(sequence: number, delayMs: number): void {
    if (!this.#deliveryCounts.has(sequence) || this.#due.has(sequence)) return;
    this.#clearTimer(sequence);
    if (delayMs <= 0) {
      this.#makeDue(sequence);
      return;
    }
    this.#timers.set(sequence, unrefTimer(() => this.#makeDue(sequence), delayMs));
  }

  touch(sequence: number, ackWaitMs: number): void {
    if (!this.#deliveryCounts.has(sequence) || this.#due.has(sequence)) return;
    this.#clearTimer(sequence);
    this.#timers.set(sequence, unrefTimer(() => this.#makeDue(sequence), ackWaitMs));
  }

  /** Hands available messages to waiting subscribers, oldest waiter first. */
  dispatch(): void {
    while (this.#waiters.length > 0) {
      const sequence = this.#takeAvailable();
      if (sequence === null) return;
      const data = this.#log.messages[sequence - this.#log.firstSequence];
      const waiter = data && this.#waiters.shift();
      if (!data || !waiter) return;
      const deliveryCount = (this.#deliveryCounts.get(sequence) ?? 0) + 1;
      this.#deliveryCounts.set(sequence, deliveryCount);
      this.#timers.set(sequence, unrefTimer(() => this.#makeDue(sequence), waiter.ackWaitMs));
      waiter.resolve({ sequence, data, deliveryCount });
    }
  }

  #takeAvailable(): number | null {
    for (const sequence of [...this.#due].sort((left, right) => left - right)) {
      this.#due.delete(sequence);
      if (sequence >= this.#log.firstSequence) return sequence;
      // Dropped by retention while unsettled: forget it, as JetStream does.
      this.#deliveryCounts.delete(sequence);
    }
    this.#nextSequence = Math.max(this.#nextSequence, this.#log.firstSequence);
    if (this.#nextSequence >= this.#log.firstSequence + this.#log.messages.length) return null;
    const sequence = this.#nextSequence;
    this.#nextSequence += 1;
    return sequence;
  }

  #makeDue(sequence: number): void {
    this.#timers.delete(sequence);
    if (!this.#deliveryCounts.has(sequence)) return;
    this.#due.add(sequence);
    this.dispatch();
  }

  #clearTimer(sequence: number): void {
    const timer = this.#timers.get(sequence);
    if (timer) clearTimeout(timer);
    this.#timers.delete(sequence);
  }
}

/** Broker timers must never keep a finished process alive: an unsettled message in a dead process is moot. */
function unrefTimer(callback: () => void, delayMs: number): NodeJS.Timeout {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return timer;
}
