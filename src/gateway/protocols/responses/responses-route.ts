/**
 * `POST /v1/responses` (the OpenAI Responses API): parses the request into a domain request and
 * encodes the turn back as a `response` object or its event stream. A response's id is its turn's
 * (`resp_<turn id>`), so `previous_response_id` continues a conversation straight from the record
 * store, with no store of its own: the continued turn's messages and reply come before the new
 * input, and its session is the new turn's.
 */
import { createStringInterner } from '../../../core/string-interner.js';
import { ClawrlError } from '../../../spec/clawrl-error.js';
import type { TurnRecord } from '../../../spec/records.js';
import { inReadScope, readScopeOf, tenantOf, type Principal } from '../../api-key-authenticator.js';
import { wireErrorOf } from '../../error-response.js';
import type { GatewayContext } from '../../gateway-context.js';
import { parseWireRequest } from '../../parse-wire-request.js';
import { domainConversation, domainSampling } from '../domain-request.js';
import { eventStreamHeaders, type ProtocolInput, type ProtocolReply, type ProtocolRoute } from '../protocol-route.js';
import {
  responsesRequestSchema,
  toDomainResponseMessages,
  toDomainResponseToolChoice,
  toDomainResponseTools,
  wireOutput,
  wireResponse,
  type ResponseIdentity,
} from './responses-api.js';
import { createResponsesStreamEncoder } from './responses-stream-encoder.js';
import type { TurnRecorder } from '../../turn-recorder.js';

const responseIdPrefix = 'resp_';

export function responseIdOf(turnId: string): string {
  return `${responseIdPrefix}${turnId}`;
}

/** The completed turn `previous_response_id` names, if the caller's tenant recorded it. */
async function continuedTurn(context: GatewayContext, responseId: string, principal: Principal): Promise<TurnRecord> {
  const notFound = () =>
    new ClawrlError('not_found', `Previous response with id '${responseId}' not found.`, { param: 'previous_response_id' });
  if (!responseId.startsWith(responseIdPrefix)) throw notFound();
  const turn = await context.store.getTurn(responseId.slice(responseIdPrefix.length));
  // Another tenant's (or user's) turn is as absent as an unknown one: ids must not reveal others' traffic.
  if (turn === null || turn.tenant !== tenantOf(principal) || !inReadScope(readScopeOf(principal), turn)) throw notFound();
  if (turn.status !== 'completed') {
    throw new ClawrlError('invalid_request', `Previous response '${responseId}' did not complete (${turn.status}); it cannot be continued.`, {
      param: 'previous_response_id',
    });
  }
  return turn;
}

export function createResponsesRoute(context: GatewayContext, recorder: TurnRecorder): ProtocolRoute {
  // As for chat completions: an agent resends its long instructions with every request.
  const longTexts = createStringInterner();

  async function handle(input: ProtocolInput): Promise<ProtocolReply> {
    const wire = parseWireRequest(responsesRequestSchema, input.body);
    const conversation = domainConversation(
      () => {
        const messages = toDomainResponseMessages(wire);
        const tools = toDomainResponseTools(wire);
        return { messages, tools: tools.tools, wireTools: tools.wire, toolChoice: toDomainResponseToolChoice(wire) };
      },
      { intern: longTexts.intern, toolSchemaPath: (index) => `tools[${index}].parameters` },
    );
    // Structured output needs constrained decoding, which no engine offers through this route: refused, not ignored.
    const format = wire.text?.format?.type;
    if (format !== undefined && format !== 'text') {
      throw new ClawrlError('unsupported', `text.format '${format}' is not supported: clawrl answers Responses requests with plain text.`, {
        param: 'text.format',
      });
    }
    const previousResponseId = wire.previous_response_id ?? null;
    const previous = previousResponseId === null ? null : await continuedTurn(context, previousResponseId, input.principal);
    const instructions = wire.instructions === null || wire.instructions === undefined ? null : longTexts.intern(wire.instructions);
    // New instructions replace the continued turn's; without any, its system prompt stays, so the
    // conversation keeps its root (and so its reply keys and next-state link).
    const history = previous === null ? [] : [...previous.messages.filter((message, index) => instructions === null || index > 0 || message.role !== 'system'), previous.response];
    const messages = [...(instructions === null ? [] : [{ role: 'system' as const, content: instructions }]), ...history, ...conversation.messages];
    const sampling = domainSampling({ maxTokens: wire.max_output_tokens, temperature: wire.temperature, topP: wire.top_p }, context.samplingDefaults);
    const stream = wire.stream === true;
    const turn = await recorder.begin({
      route: 'responses',
      model: wire.model,
      request: { messages, tools: conversation.tools, toolChoice: conversation.toolChoice, sampling },
      stream,
      header: input.header,
      principal: input.principal,
      pathSessionId: input.pathSessionId,
      continuedSessionId: previous?.sessionId,
      clientSignal: input.clientSignal,
    });
    const identity: ResponseIdentity = {
      id: responseIdOf(turn.turnId),
      createdAt: Math.floor(turn.startedAt / 1000),
      model: wire.model,
      instructions,
      previousResponseId,
      store: wire.store ?? true,
      maxOutputTokens: wire.max_output_tokens ?? null,
      temperature: sampling.temperature,
      topP: sampling.topP,
      toolChoice: wire.tool_choice,
      tools: conversation.wireTools,
      metadata: wire.metadata ?? {},
    };
    if (stream) {
      const encoder = createResponsesStreamEncoder(identity);
      return { kind: 'stream', headers: eventStreamHeaders(turn.headers), write: (sink) => turn.stream(encoder, sink) };
    }
    const result = await turn.complete();
    const choice = result.choices[0];
    const output = choice === undefined ? [] : wireOutput(identity.id, choice);
    const status = choice?.finishReason === 'length' ? 'incomplete' : 'completed';
    return { kind: 'json', headers: turn.headers, body: wireResponse(identity, { status, output, usage: result.usage }) };
  }

  return {
    label: 'responses',
    path: /^(?:\/s\/([^/]+))?\/v1\/responses$/,
    authorization: (header) => header('authorization'),
    handle,
    errorBody: wireErrorOf,
  };
}
