/**
 * The `RecordStore` seam: durable sessions and turns (and, as the RL loop grows, judgements,
 * samples, training steps and policy versions). Implementations: SQLite (embedded default) and
 * Postgres. Every implementation runs `runRecordStoreContract` from `record-store.contract.ts`.
 *
 * Durability contract: when a write method's promise resolves, the write survives `kill -9` of
 * the process.
 *
 * Storage contract: a session's shared message prefix and shared token prefix are stored once,
 * so a session's storage grows linearly with its length, not quadratically.
 */
import type { ChatMessage } from './chat.js';
import type {
  NewTurn,
  SessionCloseReason,
  SessionRecord,
  SessionStatus,
  StoreCounts,
  TurnRecord,
} from './records.js';

/** Enough of a turn to decide whether a request continues it. */
export interface TurnReference {
  id: string;
  replyKey: string | null;
  /** Whether its next state is linked already. */
  linked: boolean;
}

export interface ListSessionsOptions {
  status?: SessionStatus;
  /** Newest first; default 100. */
  limit?: number;
  offset?: number;
}

export interface RecordStore {
  /**
   * Creates the session if it does not exist, re-opens it if closed, and touches `updatedAt`.
   * Returns nothing: it runs on every request, and `getSession` builds the full record.
   */
  upsertSession(input: { id: string; tenant: string | null; at: number }): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  listSessions(options?: ListSessionsOptions): Promise<SessionRecord[]>;
  /** Closes an open session; a no-op returning false if it is already closed or unknown. */
  closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean>;
  /** Closes every open session last touched before `idleSince`; returns their ids. */
  closeIdleSessions(idleSince: number, at: number): Promise<string[]>;

  /**
   * Records a turn. Main turns get the next per-session `index`. Fails with a `store_error` for a
   * duplicate id or an unknown session.
   */
  recordTurn(turn: NewTurn): Promise<TurnRecord>;
  getTurn(id: string): Promise<TurnRecord | null>;
  /**
   * The session's latest main turn, whatever its status, as a reference: what linking the next
   * state needs, without rebuilding the turn (`getTurn` does that).
   */
  getLastMainTurn(sessionId: string): Promise<TurnReference | null>;
  /**
   * Sets a main turn's next state (the messages that followed it). Returns false if the turn is
   * unknown or already linked: the first link wins.
   */
  linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean>;
  /** The open session whose turn recorded `replyKey`, with that turn's id; null when none. */
  findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null>;

  counts(): Promise<StoreCounts>;
  /** Flushes and closes. Idempotent. */
  close(): Promise<void>;
}
