/**
 * The `TurnLog` role of the record store: what the gateway's turn recorder writes — sessions,
 * turns, next states, feedback — and the few reads recording needs. A `RecordStore` plays it.
 *
 * Linking a trainable main turn's next state queues it for judging in the same write, and so does
 * feedback on a trainable main turn: the judging queue (`judging-queue.ts`) is filled here.
 * A session's last turn never gets a next state: it is judged only from feedback.
 */
import type { ChatMessage } from './chat.js';
import type { PolicyVersion } from './inference-engine.js';
import type { FeedbackRecord, NewFeedback, NewTurn, SessionCloseReason, TurnRecord } from './records.js';

/** Enough of a turn to decide whether a request continues it. */
export interface TurnReference {
  id: string;
  replyKey: string | null;
  /** Whether its next state is linked already. */
  linked: boolean;
}

export interface TurnLog {
  /**
   * Creates the session if it does not exist, re-opens it if closed, and touches `updatedAt`.
   * Returns nothing: it runs on every request, and `getSession` builds the full record.
   */
  upsertSession(input: { id: string; tenant: string | null; user: string | null; at: number }): Promise<void>;
  /** Closes an open session; a no-op returning false if it is already closed or unknown. */
  closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean>;
  /** Closes every open session last touched before `idleSince`; returns their ids. */
  closeIdleSessions(idleSince: number, at: number): Promise<string[]>;
  /**
   * Records a turn. Main turns get the next per-session `index`. Fails with a `store_error` for a
   * duplicate id or an unknown session.
   */
  recordTurn(turn: NewTurn): Promise<TurnRecord>;
  /**
   * The session's latest main turn that no retry superseded, whatever its status, as a reference: what linking the next
   * state needs, without rebuilding the turn (`getTurn` does that).
   */
  getLastMainTurn(sessionId: string): Promise<TurnReference | null>;
  /**
   * Sets a main turn's next state (the messages that followed it) and, for a trainable turn,
   * queues it for judging in the same write. Returns false if the turn is unknown or already
   * linked: the first link wins.
   */
  linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean>;
  /**
   * Marks a main turn that a retry replaced (same session, same prompt): it stays recorded, with
   * `supersededBy`, and is never trained (trainable false, out of the judging queue), and
   * `getLastMainTurn` passes over it. Returns false, changing nothing, for an unknown turn or one
   * whose next state is linked already (a conversation continued from it: no orphan).
   */
  markSuperseded(turnId: string, supersededBy: string): Promise<boolean>;
  /** The open session whose turn recorded `replyKey`, with that turn's id; null when none. */
  findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null>;
  /** The version that served the session's first turn (what a pinned session keeps); null when none. */
  getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null>;
  /**
   * Records feedback on a turn and, for a trainable main turn, queues it again so its sample is
   * rebuilt. Returns null, recording nothing, for an unknown turn.
   */
  recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null>;
}
