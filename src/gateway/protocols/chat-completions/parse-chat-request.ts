/** Turns a raw request body into a validated domain `GenerateRequest`, or a 400 that says what is wrong. */
import type { GenerateRequest } from '../../../spec/inference-engine.js';
import type { ResponseFormat } from '../../../spec/chat.js';
import type { SamplingDefaults } from '../../gateway-context.js';
import { parseWireRequest } from '../../parse-wire-request.js';
import { domainConversation } from '../domain-request.js';
import {
  chatCompletionRequestSchema,
  toDomainMessages,
  toDomainResponseFormat,
  toDomainSampling,
  toDomainToolChoice,
  toDomainTools,
} from './chat-completions-api.js';

/** The request's structured output, when it asks for any. */
function responseFormatOf(wire: Parameters<typeof toDomainResponseFormat>[0]): { responseFormat?: ResponseFormat } {
  const responseFormat = toDomainResponseFormat(wire);
  return responseFormat === undefined ? {} : { responseFormat };
}

export interface ParsedChatRequest {
  model: string;
  request: GenerateRequest;
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  bodySessionId: string | undefined;
  bodyTurnType: string | undefined;
  bodySessionDone: string | undefined;
}

/**
 * `intern` may swap a message's text for an equal one (see `core/string-interner.ts`); the
 * request is the same either way.
 */
export function parseChatRequest(text: string, defaults: SamplingDefaults, intern: (text: string) => string = (same) => same): ParsedChatRequest {
  const wire = parseWireRequest(chatCompletionRequestSchema, text);
  const conversation = domainConversation(
    () => ({ messages: toDomainMessages(wire), tools: toDomainTools(wire), toolChoice: toDomainToolChoice(wire) }),
    { intern, toolSchemaPath: (index) => `tools[${index}].function.parameters`, contentParam: 'messages' },
  );
  const sessionDone = wire.session_done;
  return {
    model: wire.model,
    request: { ...conversation, sampling: toDomainSampling(wire, defaults), ...responseFormatOf(wire) },
    stream: wire.stream === true,
    includeUsage: wire.stream_options?.include_usage === true,
    logprobs: wire.logprobs === true,
    bodySessionId: wire.session_id ?? undefined,
    bodyTurnType: wire.turn_type ?? undefined,
    bodySessionDone: sessionDone === null || sessionDone === undefined ? undefined : String(sessionDone),
  };
}
