/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (the Anthropic Messages API): parse the
 * request into a domain request and encode the turn back as a `message` or its event stream, with
 * errors in Anthropic's shape. Keys come as `x-api-key` (Anthropic's SDKs) or `Authorization:
 * Bearer`; `anthropic-version`, `anthropic-beta` and the beta client's `?beta=true` are accepted
 * and change nothing, as no beta feature is served.
 */
import { createStringInterner } from '../../../core/string-interner.js';
import { ClawrlError } from '../../../spec/clawrl-error.js';
import type { ChatMessage, ToolChoice, ToolDefinition } from '../../../spec/chat.js';
import type { GenerateEvent } from '../../../spec/inference-engine.js';
import type { GatewayContext } from '../../gateway-context.js';
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
import { UnsupportedContentError } from '../chat-completions/chat-completions-api.js';
import { parseWireRequest } from '../chat-completions/parse-chat-request.js';
import { eventStreamHeaders, type ProtocolInput, type ProtocolReply, type ProtocolRoute } from '../protocol-route.js';
import type { TurnRecorder } from '../../turn-recorder.js';

/** `Authorization` when sent, else `x-api-key` as a bearer key: one authenticator serves both. */
function authorizationOf(header: (name: string) => string | undefined): string | undefined {
  const authorization = header('authorization');
  if (authorization !== undefined) return authorization;
  const apiKey = header('x-api-key')?.trim();
  return apiKey ? `Bearer ${apiKey}` : undefined;
}

function domainConversation(
  wire: CountTokensRequest,
  intern: (text: string) => string,
): { messages: ChatMessage[]; tools: ToolDefinition[]; toolChoice: ToolChoice } {
  let messages: ChatMessage[];
  let tools: ToolDefinition[];
  try {
    messages = toDomainMessages(wire);
    for (const message of messages) message.content = intern(message.content);
    tools = toDomainTools(wire);
  } catch (error) {
    if (error instanceof UnsupportedContentError) throw new ClawrlError('invalid_request', error.message);
    throw error;
  }
  tools.forEach((tool, index) => {
    const type = tool.parameters?.type;
    if (type !== undefined && type !== 'object') {
      throw new ClawrlError('invalid_request', `tools[${index}].input_schema must be a JSON Schema of type "object".`, {
        param: `tools[${index}].input_schema`,
      });
    }
  });
  const toolChoice = toDomainToolChoice(wire);
  if (typeof toolChoice === 'object' && !tools.some((tool) => tool.name === toolChoice.name)) {
    throw new ClawrlError('invalid_request', `tool_choice names '${toolChoice.name}', which is not among the tools.`, { param: 'tool_choice' });
  }
  return { messages, tools, toolChoice };
}

export function createMessagesRoutes(context: GatewayContext, recorder: TurnRecorder): ProtocolRoute[] {
  // As for chat completions: an agent resends its long system prompt with every request.
  const longTexts = createStringInterner();

  async function handleMessages(input: ProtocolInput): Promise<ProtocolReply> {
    const wire = parseWireRequest(messagesRequestSchema, input.body);
    const conversation = domainConversation(wire, longTexts.intern);
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

  /**
   * The gateway holds no tokenizer: the engine renders the prompt, as it would for a turn, and
   * stops after one token. What it reports is the count; nothing is recorded.
   */
  async function handleCountTokens(input: ProtocolInput): Promise<ProtocolReply> {
    const wire = parseWireRequest(countTokensRequestSchema, input.body);
    const conversation = domainConversation(wire, longTexts.intern);
    if (wire.model !== context.engine.modelId && !context.modelAliases.includes(wire.model)) {
      throw new ClawrlError('not_found', `The model '${wire.model}' does not exist.`, { param: 'model' });
    }
    const release = recorder.acquireSlot(input.principal, 'messages');
    const abort = new AbortController();
    const onClientGone = () => abort.abort(new ClawrlError('invalid_request', 'client disconnected'));
    input.clientSignal.addEventListener('abort', onClientGone, { once: true });
    const sampling = { temperature: 0, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 1 };
    const events = context.engine.generate({ ...conversation, sampling }, abort.signal)[Symbol.asyncIterator]();
    try {
      let inputTokens: number | null = null;
      for (let next = await events.next(); next.done !== true; next = await events.next()) {
        const event: GenerateEvent = next.value;
        // Engines without exact ids report none at the start; their usage at the end still counts.
        if (event.type === 'start' && event.promptTokenIds.length > 0) inputTokens = event.promptTokenIds.length;
        if (event.type === 'end') inputTokens = event.result.usage.promptTokens;
        if (inputTokens !== null) break;
      }
      if (inputTokens === null) throw new ClawrlError('upstream_error', 'The inference engine ended without counting the prompt.');
      return { kind: 'json', headers: {}, body: { input_tokens: inputTokens } };
    } finally {
      // Stop the engine and close the generation (its connection, for a remote engine) once counted.
      abort.abort(new ClawrlError('invalid_request', 'counted'));
      await events.return?.().catch(() => undefined);
      input.clientSignal.removeEventListener('abort', onClientGone);
      release();
    }
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
