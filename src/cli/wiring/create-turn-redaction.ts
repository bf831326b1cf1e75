/**
 * The gateway's redaction from `--redact`: the redactor the spec builds, on its worker thread, and the served model's
 * tokenizer (its folder's, else the serving engine's) to re-render a redacted prompt into ids that
 * spell it (`gateway/redacting-turn-log.ts`).
 */
import { createEnginePromptTokenizer } from '../../gateway/engine-prompt-tokenizer.js';
import type { TurnRedaction } from '../../gateway/redacting-turn-log.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { Logger } from '../../spec/logger.js';
import { loadRedactionSpec } from '../configuration/load-redaction-spec.js';
import { startRedactionWorker } from '../../gateway/start-redaction-worker.js';

/** Null for `--redact off`. */
export function createTurnRedaction(reference: string, tokenizers: { renderer: (() => Promise<ChatRenderer | null>) | undefined; engine: InferenceEngine }, logger: Logger): TurnRedaction | null {
  const { renderer, engine } = tokenizers;
  const spec = loadRedactionSpec(reference);
  if (spec === null) {
    logger.warn('--redact off: turns, next states and feedback are kept as sent, secrets and personal data included');
    return null;
  }
  return {
    redactor: startRedactionWorker(spec, { onWorkerFailed: (error) => logger.warn('the redaction worker failed: its requests were redacted on the main thread, the next starts a new worker', { error: error.message }) }),
    ...(engine.capabilities.tokenIds ? { engineTokenize: createEnginePromptTokenizer(engine) } : {}),
    ...(renderer === undefined
      ? {}
      : {
          renderPrompt: async (messages, tools) => {
            const loaded = await renderer();
            return loaded === null ? null : loaded.renderPrompt(messages, tools);
          },
        }),
    onRedacted: (turnId, tally) => logger.info('turn redacted before it was kept', { turnId, redacted: tally.count, kinds: tally.kinds }),
  };
}
