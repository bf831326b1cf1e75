/**
 * The serving engine as a tokenizer: the gateway holds none of its own (remote engines tokenize on
 * their side), but a one-token generation reports the ids the engine rendered the prompt into,
 * the same way `countTokens` counts them. Redaction uses it to give a redacted prompt the ids
 * that spell it (`redacting-turn-log.ts`).
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { PromptTokenizer } from './redacting-turn-log.js';
import { countingSampling } from './turn-recorder.js';

export function createEnginePromptTokenizer(engine: Pick<InferenceEngine, 'generate'>): PromptTokenizer {
  return async (messages, tools) => {
    const abort = new AbortController();
    const events = engine.generate({ messages, tools, toolChoice: 'auto', sampling: countingSampling }, abort.signal)[Symbol.asyncIterator]();
    try {
      for (let next = await events.next(); next.done !== true; next = await events.next()) {
        const event = next.value;
        // A fitted prompt is not the messages' rendering: its ids would not spell the text kept.
        if (event.type === 'start') return event.promptFit === undefined && event.promptTokenIds.length > 0 ? event.promptTokenIds : null;
      }
      return null;
    } catch {
      return null;
    } finally {
      abort.abort(new ClawrlError('invalid_request', 'tokenized'));
      await events.return?.().catch(() => undefined);
    }
  };
}
