/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (the Anthropic Messages API): parse the
 * request into a domain request and encode the turn back as a `message` or its event stream, with
 * errors in Anthropic's shape. Keys come as `x-api-key` (Anthropic's SDKs) or `Authorization:
 * Bearer`; `anthropic-version`, `anthropic-beta` and the beta client's `?beta=true` are accepted
 * and change nothing, as no beta feature is served.
 */
import { createStringInterner } from '../../../core/string-interner.js';
import type { GatewayContext } from '../../gateway-context.js';
import { parseWireRequest } from '../../parse-wire-request.js';
import {
  anthropicErrorOf,
  countTokensRequestSchema,
  messagesRequestSchema,
  toDomainMessages,
  toDomainSampling,
  toDomainToolChoice,
  toDomainTools,
  wireContent,
  wireMessage,
  wireStopReason,
  type CountTokensRequest,
} from './messages-api.js';
import { createMessagesStreamEncoder } from './messages-stream-encoder.js';
import { domainConversation } from '../domain-request.js';
import { eventStreamHeaders, type ProtocolInput, type ProtocolReply, type ProtocolRoute } from '../protocol-route.js';
import type { TurnRecorder } from '../../turn-recorder.js';

/** `Authorization` when sent, else `x-api-key` as a bearer key: one authenticator serves both. */
function authorizationOf(header: (name: string) => string | undefined): string | undefined {
  const authorization = header('authorization');
  if (authorization !== undefined) return authorization;
  const apiKey = header('x-api-key')?.trim();
  return apiKey ? `Bearer ${apiKey}` : undefined;
}

/** Messages and `count_tokens` requests share their conversation fields. */
function messagesConversation(wire: CountTokensRequest, intern: (text: string) => string) {
  return domainConversation(
    () => ({ messages: toDomainMessages(wire), tools: toDomainTools(wire), toolChoice: toDomainToolChoice(wire) }),
    { intern, toolSchemaPath: (index) => `tools[${index}].input_schema` },
  );
}

export function createMessagesRoutes(context: GatewayContext, recorder: TurnRecorder): ProtocolRoute[] {
  // As for chat completions: an agent resends its long system prompt with every request.
  const longTexts = createStringInterner();

  async function handleMessages(input: ProtocolInput): Promise<ProtocolReply> {
    const wire = parseWireRequest(messagesRequestSchema, input.body);
    const conversation = messagesConversation(wire, longTexts.intern);
    const stream = wire.stream === true;
    const turn = await recorder.begin({
      route: 'messages',
      model: wire.model,
      request: { ...conversation, sampling: toDomainSampling(wire, context.samplingDefaults) },
      stream,
      header: input.header,
      principal: input.principal,
      pathSessionId: input.pathSessionId,
      clientSignal: input.clientSignal,
    });
    const identity = { id: `msg_${turn.turnId}`, model: wire.model };
    if (stream) {
      const encoder = createMessagesStreamEncoder(identity, turn.capture.promptTokenIds.length);
      return { kind: 'stream', headers: eventStreamHeaders(turn.headers), write: (sink) => turn.stream(encoder, sink) };
    }
    const result = await turn.complete();
    const choice = result.choices[0];
    const body = wireMessage(identity, {
      content: choice === undefined ? [] : wireContent(choice),
      stopReason: wireStopReason(choice?.finishReason ?? 'stop'),
      inputTokens: result.usage.promptTokens,
      outputTokens: result.usage.completionTokens,
    });
    return { kind: 'json', headers: turn.headers, body };
  }

  /** Counted by the engine through the recorder, under the key's slot; nothing is recorded. */
  async function handleCountTokens(input: ProtocolInput): Promise<ProtocolReply> {
    const wire = parseWireRequest(countTokensRequestSchema, input.body);
    const inputTokens = await recorder.countTokens({
      route: 'messages',
      model: wire.model,
      request: messagesConversation(wire, longTexts.intern),
      principal: input.principal,
      clientSignal: input.clientSignal,
    });
    return { kind: 'json', headers: {}, body: { input_tokens: inputTokens } };
  }

  return [
    {
      label: 'messages',
      path: /^(?:\/s\/([^/]+))?\/v1\/messages$/,
      authorization: authorizationOf,
      handle: handleMessages,
      errorBody: anthropicErrorOf,
    },
    {
      label: 'messages',
      path: /^(?:\/s\/([^/]+))?\/v1\/messages\/count_tokens$/,
      authorization: authorizationOf,
      handle: handleCountTokens,
      errorBody: anthropicErrorOf,
    },
  ];
}
