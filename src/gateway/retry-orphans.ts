/**
 * Retry orphans. An agent SDK that times out sends the same request again; the first attempt (its
 * client gone, or a proxy still waiting on it) is an orphan: the conversation goes on from the
 * retry's reply, never from its own. It is kept, marked `supersededBy` the retry, and never trained
 * on (AReaL did the same in its PR 1498). A retry is a main turn of the same session with the same
 * prompt (`core/same-prompt.ts`) as the session's last main turn that nothing continued.
 *
 * The first attempt may be anywhere when the retry arrives: still generating (this gateway marks
 * it before it is recorded), being recorded (marked in the store once it is durable), or recorded
 * (the store's last turn of the session, unlinked: marked there). A first attempt on another
 * gateway replica is found only once it is recorded.
 */
import { isSamePrompt, type Prompt } from '../core/same-prompt.js';
import type { Logger } from '../spec/logger.js';
import type { GatewayStore } from './gateway-context.js';

/** A main turn this gateway is generating, until its record is durable. */
export interface InFlightMainTurn {
  readonly turnId: string;
  readonly prompt: Prompt;
  /** The retry that superseded it while it generated; what its record says. */
  supersededBy: string | null;
  /** Set once its recording began: a retry from then on marks it in the store after this settles. */
  recording: Promise<unknown> | null;
}

export interface RetryOrphans {
  /**
   * Registers a main turn as generating in its session, and supersedes the session's in-flight
   * turns with the same prompt; resolves once those already being recorded are marked in the store.
   * `end` (after the turn's record is durable) removes it.
   */
  begin(sessionId: string, turnId: string, prompt: Prompt): { turn: InFlightMainTurn; superseded: Promise<void>; end(): void };
  /** Marks `previousTurnId`, the session's unlinked last main turn, superseded when `prompt` repeats its prompt; true when it did. */
  supersedeRecorded(previousTurnId: string, turnId: string, prompt: Prompt): Promise<boolean>;
}

export function createRetryOrphans(store: Pick<GatewayStore, 'getTurn' | 'markSuperseded'>, logger: Logger): RetryOrphans {
  const bySession = new Map<string, Set<InFlightMainTurn>>();

  async function markRecorded(orphan: InFlightMainTurn, turnId: string): Promise<void> {
    await orphan.recording?.catch(() => undefined);
    await store.markSuperseded(orphan.turnId, turnId);
  }

  return {
    begin(sessionId, turnId, prompt) {
      const inFlight = bySession.get(sessionId) ?? new Set<InFlightMainTurn>();
      bySession.set(sessionId, inFlight);
      const marks: Promise<void>[] = [];
      for (const orphan of inFlight) {
        if (orphan.supersededBy !== null || !isSamePrompt(orphan.prompt, prompt)) continue;
        orphan.supersededBy = turnId;
        logger.info('a retry supersedes a turn of its session', { sessionId, turnId: orphan.turnId, supersededBy: turnId });
        if (orphan.recording !== null) marks.push(markRecorded(orphan, turnId));
      }
      const turn: InFlightMainTurn = { turnId, prompt, supersededBy: null, recording: null };
      inFlight.add(turn);
      return {
        turn,
        superseded: Promise.all(marks).then(() => undefined),
        end() {
          inFlight.delete(turn);
          if (inFlight.size === 0 && bySession.get(sessionId) === inFlight) bySession.delete(sessionId);
        },
      };
    },
    async supersedeRecorded(previousTurnId, turnId, prompt) {
      const previous = await store.getTurn(previousTurnId);
      if (previous === null || previous.type !== 'main' || !isSamePrompt(previous, prompt)) return false;
      const marked = await store.markSuperseded(previousTurnId, turnId);
      if (marked) logger.info('a retry supersedes a turn of its session', { sessionId: previous.sessionId, turnId: previousTurnId, supersededBy: turnId });
      return marked;
    },
  };
}
