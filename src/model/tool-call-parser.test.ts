import { describe, expect, it } from 'vitest';
import type { AssistantOutputDelta } from '../spec/chat-renderer.js';
import { createHermesToolCallParser, createToolCallId } from './tool-call-parser.js';

type Segment = { text: string } | { call: { index: number; id: string; name: string; arguments: string } };

/** Merges a delta stream into text runs and whole calls, checking the events' own consistency. */
function collect(deltas: AssistantOutputDelta[]): Segment[] {
  const segments: Segment[] = [];
  for (const delta of deltas) {
    const last = segments.at(-1);
    if (delta.type === 'text') {
      expect(delta.text.length).toBeGreaterThan(0);
      if (last !== undefined && 'text' in last) last.text += delta.text;
      else segments.push({ text: delta.text });
    } else if (delta.type === 'tool-call-start') {
      segments.push({ call: { index: delta.index, id: delta.id, name: delta.name, arguments: '' } });
    } else {
      if (last === undefined || !('call' in last) || last.call.index !== delta.index) {
        throw new Error('arguments for a call that was not started last');
      }
      last.call.arguments += delta.text;
    }
  }
  return segments;
}

function sequentialIds(): () => string {
  let next = 0;
  return () => `call_${next++}`;
}

function parseChunks(chunks: string[]): Segment[] {
  const parser = createHermesToolCallParser({ createId: sequentialIds() });
  const deltas = chunks.flatMap((chunk) => parser.push(chunk));
  return collect([...deltas, ...parser.finish()]);
}

function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function randomChunks(text: string, random: () => number): string[] {
  const chunks: string[] = [];
  let position = 0;
  while (position < text.length) {
    const length = 1 + Math.floor(random() * 8);
    chunks.push(text.slice(position, position + length));
    position += length;
  }
  return chunks;
}

/** Parses `text` whole, one character at a time, split in two at every boundary and in random chunks. */
function parseEveryWay(text: string): Segment[] {
  const whole = parseChunks([text]);
  expect(parseChunks([...text])).toEqual(whole);
  for (let split = 1; split < text.length; split++) {
    expect(parseChunks([text.slice(0, split), text.slice(split)])).toEqual(whole);
  }
  const random = seededRandom(text.length);
  for (let round = 0; round < 20; round++) expect(parseChunks(randomChunks(text, random))).toEqual(whole);
  return whole;
}

const call = (index: number, name: string, args: string): Segment => ({
  call: { index, id: `call_${index}`, name, arguments: args },
});

describe('createHermesToolCallParser', () => {
  it('passes plain text through, including trailing whitespace at the end', () => {
    expect(parseEveryWay('Hello 😀 world.\n\n')).toEqual([{ text: 'Hello 😀 world.\n\n' }]);
  });

  it('returns nothing for an empty reply', () => {
    expect(parseChunks([])).toEqual([]);
    expect(parseChunks(['', ''])).toEqual([]);
  });

  it('parses one call and re-serializes its arguments compactly', () => {
    expect(
      parseEveryWay('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}\n</tool_call>'),
    ).toEqual([call(0, 'get_weather', '{"city":"Paris","days":[1,2]}')]);
  });

  it('keeps text before a call without the newline that separates it from the tag', () => {
    expect(parseEveryWay('Let me check.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')).toEqual([
      { text: 'Let me check.' },
      call(0, 'f', '{}'),
    ]);
  });

  it('parses several calls and drops the whitespace between and after them', () => {
    const text =
      'Two lookups:\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "b", "arguments": {"y": "<tool_call>"}}\n</tool_call>\n\n';
    expect(parseEveryWay(text)).toEqual([{ text: 'Two lookups:' }, call(0, 'a', '{"x":1}'), call(1, 'b', '{"y":"<tool_call>"}')]);
  });

  it('keeps text that follows a call, without its leading whitespace', () => {
    expect(parseEveryWay('<tool_call>{"name": "f", "arguments": {}}</tool_call>\n Done.')).toEqual([
      call(0, 'f', '{}'),
      { text: 'Done.' },
    ]);
  });

  it('passes string arguments through and accepts `parameters` and missing arguments', () => {
    expect(
      parseEveryWay(
        '<tool_call>{"name": "s", "arguments": "{\\"raw\\": true}"}</tool_call>' +
          '<tool_call>{"name": "p", "parameters": {"q": null}}</tool_call>' +
          '<tool_call>{"name": "n"}</tool_call>',
      ),
    ).toEqual([call(0, 's', '{"raw": true}'), call(1, 'p', '{"q":null}'), call(2, 'n', '{}')]);
  });

  it('returns a malformed call as visible text, whitespace and tags included', () => {
    const text = 'Try:\n<tool_call>\n{"name": "f", "arguments": {oops}\n</tool_call>\nok';
    expect(parseEveryWay(text)).toEqual([{ text }]);
  });

  it('returns calls without a usable name as text and numbers only the good calls', () => {
    const text =
      '<tool_call>["f"]</tool_call><tool_call>{"arguments": {}}</tool_call>' +
      '<tool_call>{"name": "g", "arguments": {}}</tool_call>';
    expect(parseEveryWay(text)).toEqual([
      { text: '<tool_call>["f"]</tool_call><tool_call>{"arguments": {}}</tool_call>' },
      call(0, 'g', '{}'),
    ]);
  });

  it('returns an unterminated call as text at finish', () => {
    const text = 'Hmm\n<tool_call>\n{"name": "f", "argu';
    expect(parseEveryWay(text)).toEqual([{ text }]);
  });

  it('releases a partial tag that turns out to be ordinary text', () => {
    expect(parseEveryWay('a <tool and <tool_c> and <b>bold</b> <tool_call')).toEqual([
      { text: 'a <tool and <tool_c> and <b>bold</b> <tool_call' },
    ]);
  });

  it('holds back a possible tag start until it is decided', () => {
    const parser = createHermesToolCallParser({ createId: sequentialIds() });
    expect(parser.push('Hello <tool_')).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(parser.push('x')).toEqual([{ type: 'text', text: ' <tool_x' }]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('<')).toEqual([]);
    expect(parser.push('tool_call>{"name": "f"}')).toEqual([]);
    expect(parser.push('</tool_call>')).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_0', name: 'f' },
      { type: 'tool-call-arguments', index: 0, text: '{}' },
    ]);
    expect(parser.finish()).toEqual([]);
  });

  it('streams ordinary text without waiting for the end', () => {
    const parser = createHermesToolCallParser();
    expect(parser.push('The answer')).toEqual([{ type: 'text', text: 'The answer' }]);
    expect(parser.push(' is 42')).toEqual([{ type: 'text', text: ' is 42' }]);
  });

  it('makes OpenAI-shaped random ids by default', () => {
    const parser = createHermesToolCallParser();
    const deltas = parser.push('<tool_call>{"name": "f", "arguments": {}}</tool_call>');
    const start = deltas.find((delta) => delta.type === 'tool-call-start');
    expect(start?.type === 'tool-call-start' && start.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(createToolCallId()).not.toBe(createToolCallId());
  });

  it('gives the same result for long mixed replies however they are chunked', () => {
    const text =
      'Sure — 你好! Checking 2 cities 🌍.\n\n<tool_call>\n{"name": "w", "arguments": {"c": "P"}}\n</tool_call>\n' +
      'text < between <tool_ calls\n<tool_call>\n{"name": "w", "arguments": {"c": "O"}}\n</tool_call>' +
      '<tool_call>bad</tool_call> tail <tool_call>{"name": "x"';
    expect(parseEveryWay(text)).toEqual([
      { text: 'Sure — 你好! Checking 2 cities 🌍.' },
      call(0, 'w', '{"c":"P"}'),
      { text: 'text < between <tool_ calls' },
      call(1, 'w', '{"c":"O"}'),
      { text: '<tool_call>bad</tool_call> tail <tool_call>{"name": "x"' },
    ]);
  });
});
