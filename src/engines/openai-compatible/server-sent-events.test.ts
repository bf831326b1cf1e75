import { describe, expect, it } from 'vitest';
import { readServerSentEvents } from './server-sent-events.js';

async function read(...parts: (string | Uint8Array)[]): Promise<string[]> {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (const part of parts) yield typeof part === 'string' ? new TextEncoder().encode(part) : part;
  }
  const events: string[] = [];
  for await (const data of readServerSentEvents(chunks())) events.push(data);
  return events;
}

describe('readServerSentEvents', () => {
  it('splits events across chunk boundaries, including inside a UTF-8 character and a CRLF', async () => {
    const euro = new TextEncoder().encode('data: €\r\n\r\n');
    expect(await read('data: {"a"', ':1}\n', '\ndata: two\r', '\n\r\n', euro.slice(0, 7), euro.slice(7))).toEqual(['{"a":1}', 'two', '€']);
  });

  it('joins multi-line data, ignores comments and other fields, keeps a final unterminated event', async () => {
    expect(await read(': keep-alive\n\nevent: x\ndata: a\ndata:b\nid: 3\n\ndata: [DONE]')).toEqual(['a\nb', '[DONE]']);
  });
});
