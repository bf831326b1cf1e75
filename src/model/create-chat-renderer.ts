/**
 * The `ChatRenderer` of a model: its tokenizer, its chat template and the Hermes tool-call parser.
 */
import type { ChatRenderer } from '../spec/chat-renderer.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import { createChatTemplate } from './chat-template.js';
import { loadModelFolder } from './model-folder.js';
import { createStreamDecoder } from './stream-decoder.js';
import { createTokenizer, type Tokenizer } from './tokenizer.js';
import { createHermesToolCallParser, type HermesToolCallParserOptions } from './tool-call-parser.js';

export interface CreateChatRendererOptions {
  tokenizer: Tokenizer;
  /** Jinja source of the chat template. */
  chatTemplate: string;
  /** Used instead of `chatTemplate` when a request has tools. */
  toolUseChatTemplate?: string | null;
  /** Extra ids that end a turn (generation_config's eos list); merged with the tokenizer's own. */
  stopTokenIds?: readonly number[];
  toolCallParser?: HermesToolCallParserOptions;
}

/**
 * `decode` and the stream decoder drop special tokens (a reply's text never shows `<|im_end|>`),
 * while `encode` parses them in text and adds no bos: the template already wrote every special
 * token the prompt needs.
 */
export function createChatRenderer(options: CreateChatRendererOptions): ChatRenderer {
  const { tokenizer } = options;
  const template = createChatTemplate({
    source: options.chatTemplate,
    toolUseSource: options.toolUseChatTemplate ?? null,
    bosToken: tokenizer.bosToken,
    eosToken: tokenizer.eosToken,
  });
  const special = tokenizer.specialTokenIds;
  const stopTokenIds = [
    ...new Set(
      [special.eos, special.imEnd, special.endOfTurn, ...(options.stopTokenIds ?? [])].filter(
        (id): id is number => id !== null,
      ),
    ),
  ];
  if (stopTokenIds.length === 0) {
    throw new ClawrlError(
      'configuration_error',
      'the tokenizer has no end-of-turn token (eos_token, <|im_end|> or <|eot_id|>) and no stop ids were given',
    );
  }

  function renderText(messages: Parameters<ChatRenderer['renderText']>[0], tools: Parameters<ChatRenderer['renderText']>[1]) {
    return template.render({ messages, tools, addGenerationPrompt: true });
  }

  return {
    renderText,
    renderPrompt(messages, tools) {
      return tokenizer.encode(renderText(messages, tools), { addSpecialTokens: false });
    },
    encode(text) {
      return tokenizer.encode(text, { addSpecialTokens: false });
    },
    decode(tokenIds) {
      return tokenizer.decode(tokenIds, { skipSpecialTokens: true });
    },
    tokenText(tokenId) {
      return tokenizer.tokenText(tokenId);
    },
    stopTokenIds,
    vocabularySize: tokenizer.vocabularySize,
    createStreamDecoder() {
      return createStreamDecoder(tokenizer, { skipSpecialTokens: true });
    },
    createOutputParser() {
      return createHermesToolCallParser(options.toolCallParser);
    },
  };
}

export interface LoadChatRendererOptions {
  /** Overrides the folder's chat template (a model without one, or a fixed-up template). */
  chatTemplate?: string;
}

/** Builds the renderer of a Hugging Face model folder; weights need not be present. */
export async function loadChatRenderer(directory: string, options: LoadChatRendererOptions = {}): Promise<ChatRenderer> {
  const folder = await loadModelFolder(directory, { requireWeights: false });
  const chatTemplate = options.chatTemplate ?? folder.chatTemplate;
  if (chatTemplate === null) {
    throw new ClawrlError(
      'configuration_error',
      `model folder ${folder.directory}: no chat template (chat_template.jinja or tokenizer_config.json chat_template)`,
    );
  }
  const tokenizer = createTokenizer({ tokenizerJson: folder.tokenizerJson, tokenizerConfig: folder.tokenizerConfig });
  return createChatRenderer({
    tokenizer,
    chatTemplate,
    toolUseChatTemplate: options.chatTemplate === undefined ? folder.toolUseChatTemplate : null,
    stopTokenIds: [...(folder.generationConfig?.eosTokenIds ?? []), ...folder.config.eosTokenIds],
  });
}
