/**
 * The turn lifecycle every protocol route shares, whatever its wire: a turn begins from a domain
 * request (model check, the request's controls, the key's concurrency slot, the engine started, the
 * session resolved and the previous turn's next state linked: `turn-drafter.ts`), is fed the engine's events, and ends completed, aborted
 * or failed, recorded durably before the protocol's last byte. Routes (in `protocols/`: `chat-completions-route.ts`,
 * `responses-route.ts`, `messages-route.ts`) only parse their wire into a `GenerateRequest` and
 * encode the events back; nothing here knows a wire format.
 */
import { replyKeyOf } from '../core/conversation.js';
import { agentConversationRules } from './agent-clients/known-agent-clients.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { GenerateEvent, GenerateRequest, GenerateResult } from '../spec/inference-engine.js';
import type { TurnStatus, TurnType, UntrainableReason } from '../spec/records.js';
import { tenantOf, type Principal } from './api-key-authenticator.js';
import type { GatewayContext } from './gateway-context.js';
import { createTurnDrafter, type TurnDraft, type TurnDrafter, type TurnRequest } from './turn-drafter.js';
import { TurnCapture } from './turn-capture.js';
import { servedWithMemory } from './served-memory.js';
import { writeTurnStream, type StreamSink, type TurnStreamEncoder } from './write-turn-stream.js';

/** What a protocol route hands over once it has parsed its request. */
export interface TurnStart extends TurnRequest {
  /** The route's metric label (`chat`, `responses`, `messages`). */
  route: string;
  stream: boolean;
  principal: Principal;
  /** Aborted when the client goes away. */
  clientSignal: AbortSignal;
}

/** A begun turn: its engine has started and its session is known. It holds the key's slot until it ends. */
export interface ActiveTurn {
  /** Also for a turn not recorded (`X-Clawrl-Record: off`): the id no record will ever have. */
  readonly turnId: string;
  /** Null for a turn not recorded: it takes no part in any session. */
  readonly sessionId: string | null;
  /** Epoch milliseconds when the request arrived. */
  readonly startedAt: number;
  /**
   * `X-Clawrl-Turn-Id`, `X-Clawrl-Policy-Version`, `X-Clawrl-Session-Id` (not for a turn not recorded, which says
   * `X-Clawrl-Record: off` instead), and `X-Clawrl-Prompt-Fitted` when the prompt was fitted.
   */
  readonly headers: Record<string, string>;
  readonly capture: TurnCapture;
  /** Runs the generation to its end and records it; resolves with the result once it is durable. */
  complete(): Promise<GenerateResult>;
  /** Streams the generation through `encoder` into `sink`; resolves once recorded and written. */
  stream(encoder: TurnStreamEncoder, sink: StreamSink): Promise<void>;
}

/** What a route hands over to count a prompt's tokens (Anthropic's `count_tokens`): engine work that is no turn. */
export type TokenCountStart = Pick<TurnStart, 'route' | 'model' | 'principal' | 'clientSignal'> & { request: Omit<GenerateRequest, 'sampling'> };

export interface TurnRecorder {
  /** Throws (`ClawrlError`s carry their status) when the turn cannot begin; then nothing is held. */
  begin(start: TurnStart): Promise<ActiveTurn>;
  /**
   * The prompt's token count, as the engine renders it for a turn (the gateway holds no tokenizer):
   * the same model check and key slot as a turn, the engine stopped once it has counted, nothing recorded.
   */
  countTokens(start: TokenCountStart): Promise<number>;
}

/** One token at temperature 0: the least engine work that reports the rendered prompt. */
export const countingSampling = { temperature: 0, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 1 };

/**
 * A forced tool call or structured output the engine cannot enforce is refused, never answered in
 * free text as if it had been honoured.
 */
function refuseUnenforceable(request: GenerateRequest, engine: GatewayContext['engine']): void {
  const forced = request.toolChoice === 'required' || typeof request.toolChoice === 'object';
  if (forced && !engine.capabilities.forcedToolChoice) {
    throw new ClawrlError('unsupported', `The ${engine.engineId} engine cannot force a tool call (tool_choice "required" or a named tool); send tool_choice "auto", or serve the model with an engine that enforces it (--engine vllm).`, { param: 'tool_choice' });
  }
  if (request.responseFormat !== undefined && !engine.capabilities.responseFormats.includes(request.responseFormat.type)) {
    throw new ClawrlError('unsupported', `The ${engine.engineId} engine cannot enforce response_format ${request.responseFormat.type}; ask for text, or serve the model with an engine that enforces it (--engine vllm).`, { param: 'response_format' });
  }
}

/** An abort controller the client's going away fires; `detach` stops listening once the work ends. */
function abortOnClientGone(clientSignal: AbortSignal): { abort: AbortController; detach(): void } {
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new ClawrlError('invalid_request', 'client disconnected'));
  clientSignal.addEventListener('abort', onClientGone, { once: true });
  return { abort, detach: () => clientSignal.removeEventListener('abort', onClientGone) };
}

export function createTurnRecorder(context: GatewayContext): TurnRecorder {
  const inFlightByTenant = new Map<string, number>();
  const { controlsOf, draftTurn } = createTurnDrafter(context);

  function checkModel(model: string): void {
    if (model !== context.engine.modelId && !context.modelAliases.includes(model)) {
      throw new ClawrlError('not_found', `The model '${model}' does not exist.`, { param: 'model' });
    }
  }

  function acquireSlot(tenant: string, route: string): () => void {
    const current = inFlightByTenant.get(tenant) ?? 0;
    if (current >= context.limits.concurrencyPerKey) {
      throw new ClawrlError(
        'rate_limited',
        `Too many concurrent requests for this API key (limit ${context.limits.concurrencyPerKey}); retry when one finishes.`,
      );
    }
    inFlightByTenant.set(tenant, current + 1);
    context.metrics.inFlight.inc({ route });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      context.metrics.inFlight.dec({ route });
      const remaining = (inFlightByTenant.get(tenant) ?? 1) - 1;
      if (remaining <= 0) inFlightByTenant.delete(tenant);
      else inFlightByTenant.set(tenant, remaining);
    };
  }

  /**
   * With `--policy-scope user`, the version `user`'s request is served (its own active version, else the
   * base), and a pin to a version another user owns refused: one user's adapter learnt from that user's data.
   */
  async function userVersionOf(user: string | null, requestPin: number | null): Promise<number | null> {
    const routing = context.userPolicies;
    if (routing === undefined || user === null) return null;
    if (requestPin === null) return routing.versionFor(user);
    const owner = await routing.ownerOf(requestPin);
    if (owner !== undefined && owner !== null && owner !== user) {
      throw new ClawrlError('not_found', `No policy version ${requestPin} of this user (X-Clawrl-Policy-Version).`, { param: 'X-Clawrl-Policy-Version' });
    }
    return null;
  }

  /** Writes the turn (and any extra choices as side turns); returns once it is durable. */
  async function recordTurn(draft: TurnDraft, capture: TurnCapture, status: TurnStatus, error: string | null): Promise<void> {
    const endedAt = context.now();
    const choices = capture.choices(status === 'aborted' ? 'aborted' : 'error');
    if (draft.sessionId === null) {
      // Not recorded: counted in the metrics as numbers, and nothing else.
      for (const choice of choices) context.metrics.unrecordedTurns.inc({ type: choice.index === 0 ? draft.type : 'side', status });
      countTokenMetrics(status, capture);
      return;
    }
    const trainable = status === 'completed' && (capture.result?.trainable ?? false);
    // Read once, as the record is made: a retry arriving from now on marks the record in the store.
    const supersededBy = draft.inFlight?.supersededBy ?? null;
    for (const choice of choices) {
      const isMainLine = choice.index === 0;
      const type: TurnType = isMainLine ? draft.type : 'side';
      const untrainableReason: UntrainableReason | null = !draft.train ? 'train-off' : isMainLine && supersededBy !== null ? 'superseded' : null;
      await context.store.recordTurn({
        id: isMainLine ? draft.turnId : `${draft.turnId}-${choice.index}`,
        sessionId: draft.sessionId,
        type,
        status,
        trainable: trainable && isMainLine && draft.type === 'main' && untrainableReason === null,
        untrainableReason,
        supersededBy: isMainLine ? supersededBy : null,
        tenant: draft.tenant,
        user: draft.user,
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
        replyKey: isMainLine && status === 'completed' ? replyKeyOf(draft.conversationRoot, choice.message, agentConversationRules) : null,
      });
      context.metrics.turns.inc({ type, status });
    }
    countTokenMetrics(status, capture);
    if (draft.closeSessionAfter) await context.store.closeSession(draft.sessionId, 'done', endedAt);
  }

  function countTokenMetrics(status: TurnStatus, capture: TurnCapture): void {
    if (status !== 'completed' || capture.result === null) return;
    context.metrics.tokens.inc({ kind: 'prompt' }, capture.result.usage.promptTokens);
    context.metrics.tokens.inc({ kind: 'completion' }, capture.result.usage.completionTokens);
  }

  async function begin(start: TurnStart): Promise<ActiveTurn> {
    const startedAt = context.now();
    const { clientSignal, request } = start;
    checkModel(start.model);
    refuseUnenforceable(request, context.engine);
    const tenant = tenantOf(start.principal);
    const controls = await controlsOf(start, tenant);
    // What the engine is asked: the request with the user's memory when `--user-memory` serves it.
    // The session is still found from the request as the client sent it.
    const served = await servedWithMemory(context, start.principal.user, request);
    const release = acquireSlot(tenant ?? 'anonymous', start.route);
    try {
      const { abort, detach } = abortOnClientGone(clientSignal);
      // Start generating first: the session bookkeeping below then overlaps the engine's work
      // instead of adding to the time to first token. Pinned sessions must know their session's
      // version first, so they start after it; a request's own pin is known already.
      let events!: AsyncIterator<GenerateEvent>;
      let firstEvent!: Promise<IteratorResult<GenerateEvent>>;
      const startGeneration = (generateRequest: GenerateRequest) => {
        events = context.engine.generate(generateRequest, abort.signal)[Symbol.asyncIterator]();
        firstEvent = events.next();
        firstEvent.catch(() => undefined);
      };
      const requestPin = controls.pinnedVersion;
      const userVersion = await userVersionOf(start.principal.user, requestPin);
      const withVersion = (version: number | null): GenerateRequest => (version === null ? served : { ...served, policyVersion: version });
      // Pinned sessions and a running canary (which routes by session) start once the session is known.
      const routed = context.policyRouting?.routing() === true;
      const waitsForSession = requestPin === null && (context.pinSessions === true || routed) && controls.record;
      if (!waitsForSession) startGeneration(withVersion(requestPin ?? userVersion));
      let sessionPin: number | null = null;
      let drafted: Awaited<ReturnType<TurnDrafter['draftTurn']>> | undefined;
      try {
        drafted = await draftTurn(start, { tenant, user: start.principal.user }, controls, startedAt, served);
        if (waitsForSession) {
          const sessionId = drafted.draft.sessionId;
          if (sessionId !== null && context.pinSessions === true) sessionPin = await context.store.getSessionPolicyVersion(sessionId);
          if (sessionId !== null && sessionPin === null && routed) sessionPin = context.policyRouting?.versionFor(sessionId) ?? null;
          startGeneration(withVersion(sessionPin ?? userVersion));
        }
      } catch (error) {
        drafted?.end();
        abort.abort(error);
        detach();
        throw error;
      }
      const { draft, end } = drafted;
      const capture = new TurnCapture(request.sampling.n);
      const first = await firstEvent.catch(async (error: unknown) => {
        if (!ClawrlError.isInstance(error) || error.code !== 'not_found') throw error;
        // A version the store knows that the engine does not hold (not loaded, or evicted).
        if (requestPin !== null) {
          throw new ClawrlError('invalid_request', `Policy version ${requestPin} is not loaded on the ${context.engine.engineId} engine (X-Clawrl-Policy-Version): ${error.message}`, {
            param: 'X-Clawrl-Policy-Version',
          });
        }
        // A pinned session's or a canary's version the engine no longer holds (a restart, evicted, rolled back): serve the active one
        // (the user's own, with --policy-scope user); a user's own version it cannot serve: the base.
        const fallback = sessionPin !== null ? userVersion : userVersion !== null && userVersion !== 0 ? 0 : undefined;
        if (fallback === undefined) throw error;
        context.logger.warn('pinned policy version unavailable; serving the active version', { sessionId: draft.sessionId, version: sessionPin ?? userVersion });
        startGeneration(withVersion(fallback));
        return firstEvent;
      }).catch((error: unknown) => {
        end();
        throw error;
      });
      if (first.done === true || first.value.type !== 'start') {
        end();
        throw new ClawrlError('upstream_error', 'The inference engine ended without starting a generation.');
      }
      capture.apply(first.value, context.now());
      // A fitted prompt is the model seeing less than was sent: said in a header (before any body) and the log.
      const { promptFit } = first.value;
      if (promptFit !== undefined) {
        context.logger.info('prompt fitted to the model window', { turnId: draft.turnId, originalTokens: promptFit.originalTokens, fittedTokens: promptFit.fittedTokens });
      }
      const finish = (status: TurnStatus, error: string | null) => {
        detach();
        release();
        context.metrics.requestDuration.observe({ route: start.route, stream: String(start.stream) }, (context.now() - startedAt) / 1000);
        if (capture.firstContentAt !== null) {
          context.metrics.timeToFirstToken.observe({ stream: String(start.stream) }, (capture.firstContentAt - startedAt) / 1000);
        }
        const recorded = recordTurn(draft, capture, status, error);
        if (draft.inFlight !== null) draft.inFlight.recording = recorded;
        return recorded.finally(end);
      };
      return {
        turnId: draft.turnId,
        sessionId: draft.sessionId,
        startedAt,
        headers: {
          'x-clawrl-turn-id': draft.turnId,
          'x-clawrl-policy-version': String(capture.policyVersion),
          ...(draft.sessionId === null ? { 'x-clawrl-record': 'off' } : { 'x-clawrl-session-id': draft.sessionId }),
          ...(draft.train ? {} : { 'x-clawrl-train': 'off' }),
          ...(promptFit === undefined ? {} : { 'x-clawrl-prompt-fitted': `${promptFit.originalTokens}/${promptFit.fittedTokens}` }),
        },
        capture,
        async complete() {
          try {
            for (let next = await events.next(); next.done !== true; next = await events.next()) {
              capture.apply(next.value, context.now());
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
          return capture.result;
        },
        stream: (encoder, sink) => writeTurnStream({ events, capture, encoder, abort, now: context.now, finish, logger: context.logger }, sink),
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  async function countTokens(start: TokenCountStart): Promise<number> {
    checkModel(start.model);
    const release = acquireSlot(tenantOf(start.principal) ?? 'anonymous', start.route);
    const { abort, detach } = abortOnClientGone(start.clientSignal);
    let events: AsyncIterator<GenerateEvent> | undefined;
    try {
      const served = await servedWithMemory(context, start.principal.user, { ...start.request, sampling: countingSampling });
      events = context.engine.generate(served, abort.signal)[Symbol.asyncIterator]();
      for (let next = await events.next(); next.done !== true; next = await events.next()) {
        const event = next.value;
        // Engines without exact ids report none at the start; their usage at the end still counts.
        if (event.type === 'start' && event.promptTokenIds.length > 0) return event.promptTokenIds.length;
        if (event.type === 'end') return event.result.usage.promptTokens;
      }
      throw new ClawrlError('upstream_error', 'The inference engine ended without counting the prompt.');
    } finally {
      // Stop the engine and close the generation (its connection, for a remote engine) once counted.
      abort.abort(new ClawrlError('invalid_request', 'counted'));
      await events?.return?.().catch(() => undefined);
      detach();
      release();
    }
  }

  return { begin, countTokens };
}
