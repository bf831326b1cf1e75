/**
 * What a record store announces on the event bus once a write has committed: `turn-recorded` for a
 * main turn (the gateway's write), `turn-scored` and `sample-available` for a sample (the judge
 * worker's). Both stores call it right after the write's commit, so only committed records are
 * announced, whoever wrote them.
 *
 * Best effort: announcing never delays or fails the write. The store is the source of truth and
 * every consumer also polls it, so a lost event only costs latency.
 */
import type { EventBus, EventName, EventPayloads } from '../spec/event-bus.js';
import type { Logger } from '../spec/logger.js';
import type { SampleRecord, TurnRecord } from '../spec/records.js';

/** Where a store announces its writes; without it, a store announces nothing. */
export interface RecordEventsOptions {
  bus: Pick<EventBus, 'publish'>;
  /** Told when publishing fails. */
  logger: Logger;
}

export interface RecordEvents {
  /** After a turn's write committed. */
  turnRecorded(turn: TurnRecord): void;
  /** After a sample's write committed. */
  sampleRecorded(sample: SampleRecord): void;
}

export function createRecordEvents(options: RecordEventsOptions | undefined): RecordEvents {
  function announce<E extends EventName>(event: E, payload: EventPayloads[E]): void {
    if (options === undefined) return;
    const warn = (error: unknown): void => {
      options.logger.warn('publishing an event failed; consumers will find the record by polling', { event, error: String(error) });
    };
    try {
      options.bus.publish(event, payload).catch(warn);
    } catch (error) {
      warn(error);
    }
  }
  return {
    turnRecorded(turn) {
      if (turn.type === 'main') announce('turn-recorded', { turnId: turn.id, sessionId: turn.sessionId });
    },
    sampleRecorded(sample) {
      if (sample.score !== null) announce('turn-scored', { turnId: sample.turnId, score: sample.score });
      if (sample.status === 'ready') announce('sample-available', { sampleId: sample.id, policyVersion: sample.policyVersion });
    },
  };
}
