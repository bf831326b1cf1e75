/**
 * The dashboard's token view needs each token's text, and redaction re-renders a redacted prompt
 * into ids. The gateway has no tokenizer of its own (remote engines tokenize on their side), so the
 * composition root loads the served model's, once, when first needed; without a local tokenizer
 * folder the view shows token ids and a redacted prompt keeps no ids.
 */
import type { Logger } from '../../spec/logger.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { modelFolderOf } from './create-inference-engine.js';

/** The served model's renderer, loaded on first call; undefined without a model folder, null if it fails to load. */
export function createLazyChatRenderer(model: string, logger: Logger): (() => Promise<ChatRenderer | null>) | undefined {
  const folder = modelFolderOf(model);
  if (folder === null) return undefined;
  let renderer: Promise<ChatRenderer | null> | undefined;
  return () => {
    renderer ??= loadChatRenderer(folder).catch((error: unknown) => {
      logger.warn("the gateway cannot load the model's tokenizer; the dashboard shows token ids and redacted prompts keep no ids", { error: String(error) });
      return null;
    });
    return renderer;
  };
}

export function createTokenDecoder(renderer: (() => Promise<ChatRenderer | null>) | undefined): ((tokenIds: readonly number[]) => Promise<string[]>) | undefined {
  if (renderer === undefined) return undefined;
  return async (tokenIds) => {
    const loaded = await renderer();
    return loaded === null ? tokenIds.map((id) => `#${id}`) : tokenIds.map((id) => loaded.decode([id]));
  };
}
