/**
 * The step every protocol shares between its wire and the domain request: content the models cannot
 * take becomes a 400, long texts are interned, tool schemas must be objects, a named `tool_choice`
 * must name a tool, and what a request leaves out of its sampling takes the server's defaults. Each
 * protocol's `*-api.ts` only maps its fields onto these.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatMessage, SamplingOptions, ToolChoice, ToolDefinition } from '../../spec/chat.js';
import type { SamplingDefaults } from '../gateway-context.js';

/** Thrown by a wire conversion for content the models cannot take (images, audio); it becomes a 400. */
export class UnsupportedContentError extends Error {}

export interface DomainConversation {
  messages: ChatMessage[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
}

export interface ConversationChecks {
  /** May swap a message's text for an equal one (`core/string-interner.ts`); the request is the same either way. */
  intern: (text: string) => string;
  /** Where tool `index`'s parameter schema sits in the wire (`tools[0].function.parameters`), named by its 400. */
  toolSchemaPath: (index: number) => string;
  /** The field a 400 for unsupported content names, where the protocol names one. */
  contentParam?: string;
}

/** Runs a protocol's wire conversion (which may carry more, such as the wire tools to echo) and the checks every protocol makes of its result. */
export function domainConversation<T extends DomainConversation>(convert: () => T, checks: ConversationChecks): T {
  let conversation: T;
  try {
    conversation = convert();
  } catch (error) {
    if (error instanceof UnsupportedContentError) {
      throw new ClawrlError('invalid_request', error.message, checks.contentParam === undefined ? {} : { param: checks.contentParam });
    }
    throw error;
  }
  for (const message of conversation.messages) message.content = checks.intern(message.content);
  conversation.tools.forEach((tool, index) => {
    const type = tool.parameters?.type;
    if (type !== undefined && type !== 'object') {
      const path = checks.toolSchemaPath(index);
      throw new ClawrlError('invalid_request', `Invalid tool schema: ${path} must be a JSON Schema of type "object".`, { param: path });
    }
  });
  const { toolChoice } = conversation;
  if (typeof toolChoice === 'object' && !conversation.tools.some((tool) => tool.name === toolChoice.name)) {
    throw new ClawrlError('invalid_request', `tool_choice names '${toolChoice.name}', which is not among the tools.`, { param: 'tool_choice' });
  }
  return conversation;
}

/** The sampling a wire names, each field absent (undefined or null) where it names none. */
export type RequestedSampling = Partial<Record<'maxTokens' | 'temperature' | 'topP' | 'topK' | 'seed' | 'n', number | null>> & {
  stop?: readonly string[];
  topLogprobs?: number;
};

/** A request's own sampling where it names it, the server's defaults where not (a top_k of 0 or less turns top-k off). */
export function domainSampling(requested: RequestedSampling, defaults: SamplingDefaults): SamplingOptions {
  const topK = requested.topK ?? defaults.topK;
  return {
    maxTokens: requested.maxTokens ?? defaults.maxTokens,
    temperature: requested.temperature ?? defaults.temperature,
    topP: requested.topP ?? defaults.topP,
    ...(topK !== undefined && topK > 0 ? { topK } : {}),
    stop: (requested.stop ?? []).filter((sequence) => sequence.length > 0),
    ...(requested.seed !== null && requested.seed !== undefined ? { seed: requested.seed } : {}),
    n: requested.n ?? 1,
    topLogprobs: requested.topLogprobs ?? 0,
  };
}
