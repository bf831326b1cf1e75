/**
 * `POST /v1/chat/completions`: validates the request, attributes it to a session, links the
 * previous turn's next state, streams the engine's tokens to the client as they are produced and
 * records the turn durably before the response is acknowledged (`[DONE]` or the JSON body).
 * Transport-free: `create-gateway-request-listener.ts` feeds it a request and writes its reply.
 */
import { inferTurnType, isTruthyFlag, nextStateAfter, parseTurnType, quotedReplyIndex, replyKeyOf } from '../core/conversation.js';
import { createStringInterner } from '../core/string-interner.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { GenerateEvent, GenerateRequest } from '../spec/inference-engine.js';
import type { TurnStatus, TurnType } from '../spec/records.js';
import { tenantOf, type Principal } from './api-key-authenticator.js';
import { completionBody, wireLogprobs } from './completion-wire.js';
import type { GatewayContext } from './gateway-context.js';
import { parseChatRequest } from './parse-chat-request.js';
import { resolveSession } from './session-resolver.js';
import { TurnCapture } from './turn-capture.js';
import { writeCompletionStream, type CompletionSink } from './write-completion-stream.js';

/** An authenticated chat-completion request whose body has been read within the size limit. */
export interface ChatCompletionInput {
  body: string;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  principal: Principal;
  /** From the `/s/{sessionId}/v1` prefix. */
  pathSessionId: string | undefined;
  /** Aborted when the client goes away. */
  clientSignal: AbortSignal;
}

/**
 * What to answer: a JSON body, or an event stream whose writing records the turn. Errors before
 * either is decided are thrown (`ClawrlError`s carry their status).
 */
export type ChatCompletionReply =
  | { kind: 'json'; headers: Record<string, string>; body: Record<string, unknown> }
  | { kind: 'stream'; headers: Record<string, string>; write: (sink: CompletionSink) => Promise<void> };

/** What a generation needs to be recorded once it ends, however it ends. */
export interface TurnDraft {
  turnId: string;
  sessionId: string;
  type: TurnType;
  tenant: string | null;
  model: string;
  conversationRoot: string;
  request: GenerateRequest;
  startedAt: number;
  closeSessionAfter: boolean;
}

export function createChatCompletionsHandler(context: GatewayContext) {
  const inFlightByTenant = new Map<string, number>();
  // Without it the gateway's CPU per agent-shaped turn was 8% higher (bench gateway, 2026-12-06).
  const longTexts = createStringInterner();

  function acquireSlot(tenant: string): () => void {
    const current = inFlightByTenant.get(tenant) ?? 0;
    if (current >= context.limits.concurrencyPerKey) {
      throw new ClawrlError(
        'rate_limited',
        `Too many concurrent requests for this API key (limit ${context.limits.concurrencyPerKey}); retry when one finishes.`,
      );
    }
    inFlightByTenant.set(tenant, current + 1);
    context.metrics.inFlight.inc({ route: 'chat' });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      context.metrics.inFlight.dec({ route: 'chat' });
      const remaining = (inFlightByTenant.get(tenant) ?? 1) - 1;
      if (remaining <= 0) inFlightByTenant.delete(tenant);
      else inFlightByTenant.set(tenant, remaining);
    };
  }

  /** Writes the turn (and any extra choices as side turns); returns once it is durable. */
  async function recordTurn(draft: TurnDraft, capture: TurnCapture, status: TurnStatus, error: string | null): Promise<void> {
    const endedAt = context.now();
    const choices = capture.choices(status === 'aborted' ? 'aborted' : 'error');
    const trainable = status === 'completed' && (capture.result?.trainable ?? false);
    for (const choice of choices) {
      const isMainLine = choice.index === 0;
      const type: TurnType = isMainLine ? draft.type : 'side';
      await context.store.recordTurn({
        id: isMainLine ? draft.turnId : `${draft.turnId}-${choice.index}`,
        sessionId: draft.sessionId,
        type,
        status,
        trainable: trainable && isMainLine && draft.type === 'main',
        tenant: draft.tenant,
        model: draft.model,
        policyVersion: capture.policyVersion,
        messages: draft.request.messages,
        tools: draft.request.tools,
        sampling: draft.request.sampling,
        promptTokenIds: capture.promptTokenIds,
        responseTokenIds: choice.responseTokenIds,
        logprobs: choice.logprobs,
        response: choice.message,
        finishReason: choice.finishReason,
        timings: { startedAt: draft.startedAt, firstTokenAt: capture.firstContentAt, endedAt },
        error,
        replyKey: isMainLine && status === 'completed' ? replyKeyOf(draft.conversationRoot, choice.message) : null,
      });
      context.metrics.turns.inc({ type, status });
    }
    if (status === 'completed' && capture.result !== null) {
      context.metrics.tokens.inc({ kind: 'prompt' }, capture.result.usage.promptTokens);
      context.metrics.tokens.inc({ kind: 'completion' }, capture.result.usage.completionTokens);
    }
    if (draft.closeSessionAfter) await context.store.closeSession(draft.sessionId, 'done', endedAt);
  }

  /** Links the session's previous main turn to what followed it, if this request quotes its reply. */
  async function linkPreviousTurn(sessionId: string, messages: GenerateRequest['messages'], root: string): Promise<void> {
    const previous = await context.store.getLastMainTurn(sessionId);
    if (previous === null || previous.linked || previous.replyKey === null) return;
    const quoted = quotedReplyIndex(messages, root, previous.replyKey);
    if (quoted === -1) {
      context.logger.warn('request does not quote the previous reply of its session; next state not linked', {
        sessionId,
        turnId: previous.id,
      });
      return;
    }
    await context.store.linkNextState(previous.id, nextStateAfter(messages, quoted), context.now());
  }

  return async function handleChatCompletion(input: ChatCompletionInput): Promise<ChatCompletionReply> {
    const startedAt = context.now();
    const parsed = parseChatRequest(input.body, context.samplingDefaults, longTexts.intern);
    // Nothing below refers to `input`, so its body (the whole request's text) is not kept alive
    // for as long as the generation runs.
    const { header, principal, pathSessionId, clientSignal } = input;
    if (parsed.model !== context.engine.modelId && !context.modelAliases.includes(parsed.model)) {
      throw new ClawrlError('not_found', `The model '${parsed.model}' does not exist.`, { param: 'model' });
    }
    const tenant = tenantOf(principal);
    const release = acquireSlot(tenant ?? 'anonymous');
    let handedToStream = false;
    try {
      const abort = new AbortController();
      const onClientGone = () => abort.abort(new ClawrlError('invalid_request', 'client disconnected'));
      clientSignal.addEventListener('abort', onClientGone, { once: true });
      // Start generating first: the session bookkeeping below then overlaps the engine's work
      // instead of adding to the time to first token. Pinned sessions must know their session's
      // version first, so they start after it.
      let events!: AsyncIterator<GenerateEvent>;
      let firstEvent!: Promise<IteratorResult<GenerateEvent>>;
      const startGeneration = (request: GenerateRequest) => {
        events = context.engine.generate(request, abort.signal)[Symbol.asyncIterator]();
        firstEvent = events.next();
        firstEvent.catch(() => undefined);
      };
      if (context.pinSessions !== true) {
        startGeneration(parsed.request);
      }
      let pinnedVersion: number | null = null;
      let draft: TurnDraft;
      try {
        const session = await resolveSession({
          store: context.store,
          messages: parsed.request.messages,
          headerSessionId: header('x-session-id'),
          pathSessionId,
          bodySessionId: parsed.bodySessionId,
          createId: context.createId,
        });
        const type = parseTurnType(header('x-turn-type') ?? parsed.bodyTurnType) ?? inferTurnType(parsed.request.messages);
        // Issued together, so a store that group-commits (SQLite) commits both at once: the link
        // reads only the previous turn, which the session touch does not change. A session created
        // for this request (a fresh id) has no previous turn to look up.
        await Promise.all([
          context.store.upsertSession({ id: session.sessionId, tenant, at: startedAt }),
          type === 'main' && session.source !== 'new'
            ? linkPreviousTurn(session.sessionId, parsed.request.messages, session.conversationRoot)
            : undefined,
        ]);
        draft = {
          turnId: context.createId('turn'),
          sessionId: session.sessionId,
          type,
          tenant,
          model: parsed.model,
          conversationRoot: session.conversationRoot,
          request: parsed.request,
          startedAt,
          closeSessionAfter: isTruthyFlag(header('x-session-done') ?? parsed.bodySessionDone),
        };
        if (context.pinSessions === true) {
          pinnedVersion = await context.store.getSessionPolicyVersion(session.sessionId);
          startGeneration(pinnedVersion === null ? parsed.request : { ...parsed.request, policyVersion: pinnedVersion });
        }
      } catch (error) {
        abort.abort(error);
        clientSignal.removeEventListener('abort', onClientGone);
        throw error;
      }
      const capture = new TurnCapture(parsed.request.sampling.n);
      const first = await firstEvent.catch(async (error: unknown) => {
        // A pinned version the engine no longer holds (a restart, or evicted): serve the active one.
        if (pinnedVersion === null || !ClawrlError.isInstance(error) || error.code !== 'not_found') throw error;
        context.logger.warn('pinned policy version unavailable; serving the active version', { sessionId: draft.sessionId, version: pinnedVersion });
        startGeneration(parsed.request);
        return firstEvent;
      });
      if (first.done === true || first.value.type !== 'start') {
        throw new ClawrlError('upstream_error', 'The inference engine ended without starting a generation.');
      }
      capture.apply(first.value, context.now());
      const headers = {
        'x-clawrl-turn-id': draft.turnId,
        'x-clawrl-policy-version': String(capture.policyVersion),
        'x-clawrl-session-id': draft.sessionId,
      };
      const identity = { id: `chatcmpl-${draft.turnId}`, created: Math.floor(startedAt / 1000), model: parsed.model };
      const finish = (status: TurnStatus, error: string | null) => {
        clientSignal.removeEventListener('abort', onClientGone);
        release();
        context.metrics.requestDuration.observe({ route: 'chat', stream: String(parsed.stream) }, (context.now() - startedAt) / 1000);
        if (capture.firstContentAt !== null) {
          context.metrics.timeToFirstToken.observe({ stream: String(parsed.stream) }, (capture.firstContentAt - startedAt) / 1000);
        }
        return recordTurn(draft, capture, status, error);
      };

      if (parsed.stream) {
        handedToStream = true;
        const streamOptions = {
          events,
          capture,
          identity,
          includeUsage: parsed.includeUsage,
          topLogprobs: parsed.logprobs ? parsed.request.sampling.topLogprobs : null,
          abort,
          now: context.now,
          finish,
          logger: context.logger,
        };
        return {
          kind: 'stream',
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers },
          write: (sink) => writeCompletionStream(streamOptions, sink),
        };
      }

      try {
        for (let next = await events.next(); next.done !== true; next = await events.next()) {
          capture.apply(next.value as GenerateEvent, context.now());
        }
      } catch (error) {
        await finish(abort.signal.aborted ? 'aborted' : 'failed', error instanceof Error ? error.message : String(error));
        throw error;
      }
      if (abort.signal.aborted || capture.result === null) {
        await finish('aborted', null);
        throw new ClawrlError('upstream_error', 'The generation was aborted before it completed.');
      }
      await finish('completed', null);
      const result = capture.result;
      const logprobsOf = parsed.logprobs
        ? (index: number) => wireLogprobs(capture.tokensOf(index), parsed.request.sampling.topLogprobs)
        : null;
      return { kind: 'json', headers, body: completionBody(identity, result.choices, logprobsOf, result.usage) };
    } finally {
      if (!handedToStream) release();
    }
  };
}

