/**
 * The dashboard's token view needs each token's text. The gateway has no tokenizer of its own
 * (remote engines tokenize on their side), so the composition root loads the served model's, once,
 * on the first turn viewed; without a local tokenizer folder the view shows token ids.
 */
import type { Logger } from '../../spec/logger.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { modelFolderOf } from './create-inference-engine.js';

export function createTokenDecoder(model: string, logger: Logger): ((tokenIds: readonly number[]) => Promise<string[]>) | undefined {
  const folder = modelFolderOf(model);
  if (folder === null) return undefined;
  let renderer: Promise<ChatRenderer | null> | undefined;
  return async (tokenIds) => {
    renderer ??= loadChatRenderer(folder).catch((error: unknown) => {
      logger.warn('the dashboard cannot load the model\'s tokenizer; turns show token ids', { error: String(error) });
      return null;
    });
    const loaded = await renderer;
    return loaded === null ? tokenIds.map((id) => `#${id}`) : tokenIds.map((id) => loaded.decode([id]));
  };
}
