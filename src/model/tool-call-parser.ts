/**
 * Incremental parser for Hermes / Qwen style tool calls in generated text:
 *
 *   I'll check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
 *
 * Decisions, all chosen so that re-rendering the parsed reply with a Qwen-style template gives
 * back the text the model produced:
 * - Whitespace right before a `<tool_call>` tag, between calls and after the last call is layout
 *   the template adds itself, not visible text. So trailing whitespace of the visible text is held
 *   back until the next non-whitespace character decides what it is.
 * - A call is emitted only once its closing tag has arrived and its body parsed: a start event that
 *   a later malformed body would have to retract cannot be taken back in a stream. Arguments come
 *   as one piece, re-serialized compactly (`JSON.stringify`); a string-valued `arguments` is
 *   passed through as the model wrote it.
 * - A body that is not a JSON object with a string `name` is returned as visible text, tags and
 *   surrounding whitespace included, so nothing the model wrote is lost. So is an unterminated
 *   call at `finish()`.
 * - `parameters` is accepted in place of `arguments` (Llama 3.1's JSON tool format).
 */
import { randomInt } from 'node:crypto';
import type { AssistantOutputDelta, AssistantOutputParser } from '../spec/chat-renderer.js';

const openTag = '<tool_call>';
const closeTag = '</tool_call>';
const idAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `call_` followed by 24 random alphanumerics, the shape OpenAI's ids have. */
export function createToolCallId(): string {
  let id = 'call_';
  for (let index = 0; index < 24; index++) id += idAlphabet[randomInt(idAlphabet.length)];
  return id;
}

export interface HermesToolCallParserOptions {
  /** Makes tool-call ids; injectable for deterministic tests. */
  createId?: () => string;
}

interface ParsedCall {
  name: string;
  arguments: string;
}

function parseCallBody(body: string): ParsedCall | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.name !== 'string' || record.name.length === 0) return null;
  const argumentsValue = record.arguments ?? record.parameters ?? {};
  return {
    name: record.name,
    arguments: typeof argumentsValue === 'string' ? argumentsValue : JSON.stringify(argumentsValue),
  };
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagLength(text: string, tag: string): number {
  const longest = Math.min(text.length, tag.length - 1);
  for (let length = longest; length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

function trailingWhitespaceStart(text: string): number {
  let index = text.length;
  while (index > 0 && /\s/.test(text[index - 1] ?? '')) index--;
  return index;
}

export function createHermesToolCallParser(options: HermesToolCallParserOptions = {}): AssistantOutputParser {
  const createId = options.createId ?? createToolCallId;
  /** Text not yet emitted: outside a call, a possible tag start and trailing whitespace. */
  let pending = '';
  /** Inside a call: everything after the opening tag. */
  let body: string | null = null;
  /** The whitespace dropped before the opening tag, restored if the call turns out malformed. */
  let whitespaceBeforeCall = '';
  let callCount = 0;
  /** Right after a well-formed call: leading whitespace is layout, not text. */
  let afterCall = false;

  function emitText(deltas: AssistantOutputDelta[], text: string): void {
    if (afterCall) {
      const trimmed = text.trimStart();
      if (trimmed.length === 0) return;
      afterCall = false;
      text = trimmed;
    }
    if (text.length > 0) deltas.push({ type: 'text', text });
  }

  function closeCall(deltas: AssistantOutputDelta[], callBody: string): void {
    const parsed = parseCallBody(callBody);
    if (parsed === null) {
      emitText(deltas, whitespaceBeforeCall + openTag + callBody + closeTag);
      return;
    }
    const index = callCount++;
    deltas.push({ type: 'tool-call-start', index, id: createId(), name: parsed.name });
    deltas.push({ type: 'tool-call-arguments', index, text: parsed.arguments });
    afterCall = true;
  }

  function drain(deltas: AssistantOutputDelta[]): void {
    for (;;) {
      if (body !== null) {
        const end = body.indexOf(closeTag);
        if (end < 0) return;
        const callBody = body.slice(0, end);
        pending = body.slice(end + closeTag.length);
        body = null;
        closeCall(deltas, callBody);
        continue;
      }
      const start = pending.indexOf(openTag);
      if (start >= 0) {
        const before = pending.slice(0, start);
        const whitespaceStart = trailingWhitespaceStart(before);
        emitText(deltas, before.slice(0, whitespaceStart));
        whitespaceBeforeCall = before.slice(whitespaceStart);
        body = pending.slice(start + openTag.length);
        pending = '';
        continue;
      }
      // Hold back what may still become `<tool_call>` and the whitespace that would precede it.
      const heldFrom = trailingWhitespaceStart(pending.slice(0, pending.length - partialTagLength(pending, openTag)));
      emitText(deltas, pending.slice(0, heldFrom));
      pending = pending.slice(heldFrom);
      return;
    }
  }

  return {
    push(text) {
      const deltas: AssistantOutputDelta[] = [];
      if (body !== null) body += text;
      else pending += text;
      drain(deltas);
      return deltas;
    },
    finish() {
      const deltas: AssistantOutputDelta[] = [];
      if (body !== null) {
        emitText(deltas, whitespaceBeforeCall + openTag + body);
        body = null;
      }
      emitText(deltas, pending);
      pending = '';
      return deltas;
    },
  };
}
