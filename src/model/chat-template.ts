/**
 * Renders a conversation with a model's Jinja chat template (@huggingface/jinja), feeding it the
 * same variables transformers' `apply_chat_template` does: OpenAI-shaped `messages` and `tools`,
 * `add_generation_prompt`, the special token strings and `raise_exception`.
 */
import { Template } from '@huggingface/jinja';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface TemplateToolCall {
  id: string;
  type: 'function';
  /** `arguments` is the parsed JSON value when the text is valid JSON, else the text itself. */
  function: { name: string; arguments: unknown };
}

/** The message dictionary shape chat templates are written against. */
export interface TemplateMessage {
  role: string;
  content: string;
  tool_calls?: TemplateToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface TemplateTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Templates that check `arguments is string` write it verbatim; the others quote it.
    return text;
  }
}

export function toTemplateMessage(message: ChatMessage): TemplateMessage {
  // Absent keys stay absent: templates test `message.tool_calls is defined` and the like.
  const result: TemplateMessage = { role: message.role, content: message.content };
  if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
    result.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: parseArguments(call.arguments) },
    }));
  }
  if (message.toolCallId !== undefined) result.tool_call_id = message.toolCallId;
  if (message.name !== undefined) result.name = message.name;
  return result;
}

export function toTemplateTool(tool: ToolDefinition): TemplateTool {
  const definition: TemplateTool['function'] = { name: tool.name };
  if (tool.description !== undefined) definition.description = tool.description;
  if (tool.parameters !== undefined) definition.parameters = tool.parameters;
  return { type: 'function', function: definition };
}

export interface RenderChatOptions {
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  /** Appends the header of the assistant turn to be generated; true by default. */
  addGenerationPrompt?: boolean;
  /** Further template variables (`enable_thinking`, `date_string`, ...). */
  variables?: Record<string, unknown>;
}

export interface ChatTemplate {
  render(options: RenderChatOptions): string;
}

export interface CreateChatTemplateOptions {
  /** The Jinja source of the default template. */
  source: string;
  /** A separate template for requests with tools (`tool_use` in tokenizer_config.json). */
  toolUseSource?: string | null;
  bosToken?: string | null;
  eosToken?: string | null;
}

function compile(source: string, name: string): Template {
  try {
    return new Template(source);
  } catch (error) {
    throw new ClawrlError('configuration_error', `chat template (${name}) does not parse: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createChatTemplate(options: CreateChatTemplateOptions): ChatTemplate {
  const defaultTemplate = compile(options.source, 'default');
  const toolUseTemplate =
    options.toolUseSource === undefined || options.toolUseSource === null
      ? null
      : compile(options.toolUseSource, 'tool_use');
  const specialTokens: Record<string, string> = {};
  // transformers passes only the tokens that are set; a missing one renders as '' rather than 'None'.
  if (options.bosToken !== undefined && options.bosToken !== null) specialTokens.bos_token = options.bosToken;
  if (options.eosToken !== undefined && options.eosToken !== null) specialTokens.eos_token = options.eosToken;

  return {
    render(renderOptions) {
      const tools = renderOptions.tools ?? [];
      const template = tools.length > 0 && toolUseTemplate !== null ? toolUseTemplate : defaultTemplate;
      try {
        return template.render({
          ...renderOptions.variables,
          ...specialTokens,
          messages: renderOptions.messages.map(toTemplateMessage),
          // No tools is `None` for the template, as in transformers, not an empty list.
          tools: tools.length > 0 ? tools.map(toTemplateTool) : null,
          add_generation_prompt: renderOptions.addGenerationPrompt ?? true,
        });
      } catch (error) {
        // Templates call raise_exception for conversations the model cannot take (roles out of
        // order, unknown roles); the built-in raise_exception throws a plain Error with that text.
        throw new ClawrlError('invalid_request', `the model's chat template rejected the conversation: ${messageOf(error)}`, {
          cause: error,
          param: 'messages',
        });
      }
    },
  };
}
