/** Turns a raw request body into a validated domain `GenerateRequest`, or a 400 that says what is wrong. */
import type { z } from 'zod';
import { ClawrlError } from '../../../spec/clawrl-error.js';
import type { GenerateRequest } from '../../../spec/inference-engine.js';
import type { ResponseFormat } from '../../../spec/chat.js';
import type { SamplingDefaults } from '../../gateway-context.js';
import {
  UnsupportedContentError,
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

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ClawrlError('invalid_request', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Validates a parsed JSON body against a protocol's request schema; the first issue becomes a 400 naming its field. */
export function parseWireRequest<T>(schema: z.ZodType<T>, text: string): T {
  const validation = schema.safeParse(parseJsonBody(text));
  if (validation.success) return validation.data;
  const issue = validation.error.issues[0];
  const path = issue === undefined ? '' : issuePath(issue);
  throw new ClawrlError('invalid_request', `Invalid request: ${path ? `${path}: ` : ''}${issue?.message ?? 'invalid body'}`, {
    ...(path ? { param: path } : {}),
  });
}

/**
 * `intern` may swap a message's text for an equal one (see `core/string-interner.ts`); the
 * request is the same either way.
 */
export function parseChatRequest(text: string, defaults: SamplingDefaults, intern: (text: string) => string = (same) => same): ParsedChatRequest {
  const wire = parseWireRequest(chatCompletionRequestSchema, text);
  let messages;
  try {
    messages = toDomainMessages(wire);
  } catch (error) {
    if (error instanceof UnsupportedContentError) throw new ClawrlError('invalid_request', error.message, { param: 'messages' });
    throw error;
  }
  for (const message of messages) message.content = intern(message.content);
  const tools = toDomainTools(wire);
  tools.forEach((tool, index) => {
    const type = tool.parameters?.type;
    if (type !== undefined && type !== 'object') {
      throw new ClawrlError('invalid_request', `Invalid tool schema: tools[${index}].function.parameters must be a JSON Schema of type "object".`, {
        param: `tools[${index}].function.parameters`,
      });
    }
  });
  const toolChoice = toDomainToolChoice(wire);
  if (typeof toolChoice === 'object' && !tools.some((tool) => tool.name === toolChoice.name)) {
    throw new ClawrlError('invalid_request', `tool_choice names '${toolChoice.name}', which is not among the tools.`, {
      param: 'tool_choice',
    });
  }
  const sessionDone = wire.session_done;
  return {
    model: wire.model,
    request: { messages, tools, toolChoice, sampling: toDomainSampling(wire, defaults), ...responseFormatOf(wire) },
    stream: wire.stream === true,
    includeUsage: wire.stream_options?.include_usage === true,
    logprobs: wire.logprobs === true,
    bodySessionId: wire.session_id ?? undefined,
    bodyTurnType: wire.turn_type ?? undefined,
    bodySessionDone: sessionDone === null || sessionDone === undefined ? undefined : String(sessionDone),
  };
}
