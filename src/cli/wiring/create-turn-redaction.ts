/**
 * The gateway's redaction from `--redact`: the redactor the spec builds, and the served model's
 * tokenizer to re-render a redacted prompt into ids that spell it (`gateway/redacting-turn-log.ts`).
 */
import { createRedactor } from '../../core/redaction/create-redactor.js';
import type { TurnRedaction } from '../../gateway/redacting-turn-log.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { Logger } from '../../spec/logger.js';
import { loadRedactionSpec } from '../configuration/load-redaction-spec.js';

/** Null for `--redact off`. */
export function createTurnRedaction(reference: string, renderer: (() => Promise<ChatRenderer | null>) | undefined, logger: Logger): TurnRedaction | null {
  const spec = loadRedactionSpec(reference);
  if (spec === null) {
    logger.warn('--redact off: turns, next states and feedback are kept as sent, secrets and personal data included');
    return null;
  }
  return {
    redactor: createRedactor(spec),
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
