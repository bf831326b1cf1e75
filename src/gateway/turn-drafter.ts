/**
 * The part of a turn's beginning that concerns what it is and where it belongs: the request's
 * controls (pin, train, record: `request-controls.ts`), its session resolved and touched, the
 * session's previous turn linked to what followed it or, for a retry, superseded
 * (`retry-orphans.ts`), and a main turn registered as in flight. The turn recorder runs it beside
 * the engine's start.
 */
import { isTruthyFlag, nextStateAfter, parseTurnType, quotedReplyIndex } from '../core/conversation.js';
import type { GenerateRequest } from '../spec/inference-engine.js';
import type { TurnType } from '../spec/records.js';
import { agentConversationRules, inferTurnType } from './agent-clients/known-agent-clients.js';
import type { GatewayContext } from './gateway-context.js';
import { checkPinnedVersion, fullConsent, requestControlsOf, type RequestControls } from './request-controls.js';
import { createRetryOrphans, type InFlightMainTurn } from './retry-orphans.js';
import { resolveSession } from './session-resolver.js';

/** What a route's parsed request says of the turn, whatever its wire. */
export interface TurnRequest {
  model: string;
  request: GenerateRequest;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** From the `/s/{sessionId}/v1` prefix. */
  pathSessionId: string | undefined;
  /** Body fallbacks for the session headers (`session_id`, `turn_type`, `session_done`). */
  bodySessionId?: string | undefined;
  bodyTurnType?: string | undefined;
  bodySessionDone?: string | undefined;
  /** A session the protocol itself names (the turn a Responses `previous_response_id` continues). */
  continuedSessionId?: string | undefined;
}

/** Whose request it is: the key's tenant and the user its credentials named. */
export interface RequestIdentity {
  tenant: string | null;
  user: string | null;
}

/** What a generation needs to be recorded once it ends, however it ends. */
export interface TurnDraft {
  turnId: string;
  /** Null when the request said `X-Clawrl-Record: off`: then nothing of the turn is written. */
  sessionId: string | null;
  /** False: recorded, never trained (`X-Clawrl-Train: off`). */
  train: boolean;
  /** A main turn while it generates: a retry may supersede it before it is recorded. */
  inFlight: InFlightMainTurn | null;
  type: TurnType;
  tenant: string | null;
  /** The user the request's credentials named. */
  user: string | null;
  model: string;
  conversationRoot: string;
  request: GenerateRequest;
  startedAt: number;
  closeSessionAfter: boolean;
}

export interface TurnDrafter {
  /** The request's controls, its pin checked against the recorded versions (400 naming an unknown or retired one). */
  controlsOf(start: TurnRequest, tenant: string | null): Promise<RequestControls>;
  /**
   * The turn's draft: its session resolved and touched, the previous turn linked (or superseded, for
   * a retry), and a main turn registered as in flight until `end` (once its record is durable, or
   * it failed to start). A turn not recorded does none of it. `served` is the request as the engine
   * got it (with the user's memory, `served-memory.ts`): what is recorded, and what a retry is
   * compared with; the session and the quoted reply are found from the request as sent.
   */
  draftTurn(start: TurnRequest, who: RequestIdentity, controls: RequestControls, startedAt: number, served?: GenerateRequest): Promise<{ draft: TurnDraft; end(): void }>;
}

export function createTurnDrafter(context: GatewayContext): TurnDrafter {
  const orphans = createRetryOrphans(context.store, context.logger);

  /**
   * Links the session's previous main turn to what followed it, if this request quotes its reply;
   * if it repeats that turn's prompt instead, it is a retry and the previous turn its orphan.
   */
  async function linkPreviousTurn(sessionId: string, request: GenerateRequest, served: GenerateRequest, root: string, turnId: string): Promise<void> {
    const { messages } = request;
    const previous = await context.store.getLastMainTurn(sessionId);
    if (previous === null || previous.linked) return;
    const quoted = previous.replyKey === null ? -1 : quotedReplyIndex(messages, root, previous.replyKey, agentConversationRules);
    if (quoted === -1) {
      if (await orphans.supersedeRecorded(previous.id, turnId, served)) return;
      if (previous.replyKey === null) return;
      context.logger.warn('request does not quote the previous reply of its session; next state not linked', {
        sessionId,
        turnId: previous.id,
      });
      return;
    }
    await context.store.linkNextState(previous.id, nextStateAfter(messages, quoted, agentConversationRules), context.now());
  }

  async function controlsOf(start: TurnRequest, tenant: string | null): Promise<RequestControls> {
    const controls = requestControlsOf(start.header, context.consentDefaults?.get(tenant ?? '') ?? fullConsent);
    if (controls.pinnedVersion !== null) checkPinnedVersion(controls.pinnedVersion, await context.store.listPolicyVersions());
    return controls;
  }

  async function draftTurn(start: TurnRequest, who: RequestIdentity, controls: RequestControls, startedAt: number, served = start.request): Promise<{ draft: TurnDraft; end(): void }> {
    const { tenant, user } = who;
    const { header, request } = start;
    const common = {
      turnId: context.createId('turn'),
      type: parseTurnType(header('x-turn-type') ?? start.bodyTurnType) ?? inferTurnType(request.messages),
      tenant,
      user,
      model: start.model,
      request: served,
      startedAt,
      train: controls.train,
    };
    if (!controls.record) {
      return { draft: { ...common, sessionId: null, conversationRoot: '', inFlight: null, closeSessionAfter: false }, end: () => undefined };
    }
    const session = await resolveSession({
      store: context.store,
      messages: request.messages,
      headerSessionId: header('x-session-id'),
      pathSessionId: start.pathSessionId,
      bodySessionId: start.bodySessionId,
      continuedSessionId: start.continuedSessionId,
      createId: context.createId,
    });
    // In flight from here, before the session's last turn is read, so a retry finds this turn
    // either here or in the store (`retry-orphans.ts`).
    const inFlight = common.type === 'main' ? orphans.begin(session.sessionId, common.turnId, served) : null;
    try {
      // Issued together, so a store that group-commits (SQLite) commits both at once: the link
      // reads only the previous turn, which the session touch does not change. A session created
      // for this request (a fresh id) has no previous turn to look up.
      await Promise.all([
        context.store.upsertSession({ id: session.sessionId, tenant, user, at: startedAt }),
        common.type === 'main' && session.source !== 'new' ? linkPreviousTurn(session.sessionId, request, served, session.conversationRoot, common.turnId) : undefined,
        inFlight?.superseded,
      ]);
    } catch (error) {
      inFlight?.end();
      throw error;
    }
    const closeSessionAfter = isTruthyFlag(header('x-session-done') ?? start.bodySessionDone);
    const draft = { ...common, sessionId: session.sessionId, conversationRoot: session.conversationRoot, inFlight: inFlight?.turn ?? null, closeSessionAfter };
    return { draft, end: () => inFlight?.end() };
  }

  return { controlsOf, draftTurn };
}
