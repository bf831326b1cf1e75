/**
 * Persisted record types. The record store is the source of truth: every service can restart
 * and rebuild its state from these.
 */
import type { ChatMessage, SamplingOptions, ToolDefinition } from './chat.js';
import type { FinishReason, PolicyVersion } from './inference-engine.js';

/** `main`: the agent's line of work, trained on. `side`: heartbeats, memory, cron; served, never trained. */
export type TurnType = 'main' | 'side';

/**
 * `completed`: the response was delivered. `aborted`: the client went away mid-response (kept,
 * never trained). `failed`: the engine failed after the turn started (kept for debugging).
 */
export type TurnStatus = 'completed' | 'aborted' | 'failed';

export type SessionStatus = 'open' | 'closed';

/** Why a session closed. */
export type SessionCloseReason = 'done' | 'idle' | 'admin';

/** How the gateway attributed a request to its session. */
export type SessionSource = 'header' | 'path' | 'inferred' | 'new';

export interface SessionRecord {
  id: string;
  /** Tenant (API key name) that opened the session; null when auth is off. */
  tenant: string | null;
  status: SessionStatus;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  closeReason: SessionCloseReason | null;
  /** Main turns, oldest first. */
  turnIds: string[];
  /** Side turns count. */
  sideTurns: number;
}

export interface TurnTimings {
  /** Epoch milliseconds when the request arrived. */
  startedAt: number;
  /** When the first token was sent to the client; null if none was. */
  firstTokenAt: number | null;
  endedAt: number;
}

/** A turn as the gateway hands it to the store. */
export interface NewTurn {
  id: string;
  sessionId: string;
  type: TurnType;
  status: TurnStatus;
  /** False for engines without exact token ids, aborted and failed turns. */
  trainable: boolean;
  tenant: string | null;
  model: string;
  policyVersion: PolicyVersion;
  /** Normalized request messages, exactly as the model saw them (after any truncation). */
  messages: ChatMessage[];
  tools: ToolDefinition[];
  sampling: SamplingOptions;
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** One log-prob per response token. */
  logprobs: number[];
  /** The assistant message the client received (content and tool calls). */
  response: ChatMessage;
  finishReason: FinishReason;
  timings: TurnTimings;
  /** For failed turns, what went wrong. */
  error: string | null;
  /**
   * Key under which later requests that quote this turn's reply find the session again (header-free
   * session stitching); null for turns that must not be matched.
   */
  replyKey: string | null;
}

export interface TurnRecord extends NewTurn {
  /** Position among the session's main turns (0-based); side turns get -1. */
  index: number;
  /** What followed the turn: the user's reply or the tool results. Null until linked. */
  nextState: ChatMessage[] | null;
  nextStateAt: number | null;
}

/** Counts for `/admin/status` and `clawrl status`. */
export interface StoreCounts {
  sessions: { open: number; closed: number };
  turns: { main: number; side: number; aborted: number; failed: number; trainable: number };
  /** Main turns whose next state is linked. */
  linked: number;
}
