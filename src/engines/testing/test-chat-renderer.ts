/**
 * A `ChatRenderer` over the fake model's tokenizer (fake-model.ts), so adapters that render
 * prompts themselves (SGLang `/generate`) can be tested against the fake server: the ids it
 * renders are the ids the fake server reads back, and it parses Hermes-style
 * `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks.
 */
import type { AssistantOutputDelta, AssistantOutputParser, ChatRenderer, StreamDecoder } from '../../spec/chat-renderer.js';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import {
  decodeTokens,
  encodeWords,
  endOfTurnTokenId,
  fakeVocabularySize,
  renderPromptIds,
  renderPromptText,
  tokenBytes,
  tokenText,
  type FakeTurn,
} from './fake-model.js';

function toTurns(messages: ChatMessage[]): FakeTurn[] {
  return messages.map((message) => ({
    role: message.role,
    content: message.content,
    toolCalls: (message.toolCalls ?? []).map((call) => ({ name: call.name, arguments: call.arguments })),
  }));
}

const openTag = '<tool_call>';
const closeTag = '</tool_call>';

/** How much of `text`'s end could be the start of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length -= 1) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

class ToolCallOutputParser implements AssistantOutputParser {
  private buffer = '';
  private insideCall = false;
  private callCount = 0;

  push(text: string): AssistantOutputDelta[] {
    this.buffer += text;
    const deltas: AssistantOutputDelta[] = [];
    for (;;) {
      if (!this.insideCall) {
        const start = this.buffer.indexOf(openTag);
        if (start === -1) {
          const keep = partialTagLength(this.buffer, openTag);
          this.emitText(deltas, this.buffer.slice(0, this.buffer.length - keep));
          this.buffer = this.buffer.slice(this.buffer.length - keep);
          return deltas;
        }
        this.emitText(deltas, this.buffer.slice(0, start));
        this.buffer = this.buffer.slice(start);
        this.insideCall = true;
      }
      const end = this.buffer.indexOf(closeTag);
      if (end === -1) return deltas;
      const block = this.buffer.slice(0, end + closeTag.length);
      this.buffer = this.buffer.slice(end + closeTag.length);
      this.insideCall = false;
      this.emitCall(deltas, block);
    }
  }

  finish(): AssistantOutputDelta[] {
    const deltas: AssistantOutputDelta[] = [];
    this.emitText(deltas, this.buffer);
    this.buffer = '';
    this.insideCall = false;
    return deltas;
  }

  private emitText(deltas: AssistantOutputDelta[], text: string): void {
    if (text !== '') deltas.push({ type: 'text', text });
  }

  private emitCall(deltas: AssistantOutputDelta[], block: string): void {
    const json = block.slice(openTag.length, block.length - closeTag.length);
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      this.emitText(deltas, block);
      return;
    }
    const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    const name = record['name'];
    if (typeof name !== 'string') {
      this.emitText(deltas, block);
      return;
    }
    const index = this.callCount;
    this.callCount += 1;
    deltas.push({ type: 'tool-call-start', index, id: `call_${index}`, name });
    deltas.push({ type: 'tool-call-arguments', index, text: JSON.stringify(record['arguments'] ?? {}) });
  }
}

class ByteStreamDecoder implements StreamDecoder {
  private readonly decoder = new TextDecoder('utf-8');

  push(tokenId: number): string {
    return this.decoder.decode(tokenBytes(tokenId), { stream: true });
  }

  finish(): string {
    return this.decoder.decode();
  }
}

export function createTestChatRenderer(): ChatRenderer {
  return {
    renderPrompt: (messages: ChatMessage[], tools: ToolDefinition[]) => renderPromptIds(toTurns(messages), tools.map((tool) => tool.name)),
    renderText: (messages: ChatMessage[], tools: ToolDefinition[]) => renderPromptText(toTurns(messages), tools.map((tool) => tool.name)),
    encode: (text: string) => encodeWords(text),
    decode: (tokenIds: number[]) => decodeTokens(tokenIds),
    tokenText: (tokenId: number) => tokenText(tokenId),
    stopTokenIds: [endOfTurnTokenId],
    vocabularySize: fakeVocabularySize,
    createStreamDecoder: () => new ByteStreamDecoder(),
    createOutputParser: () => new ToolCallOutputParser(),
  };
}
