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

  it('accepts bare CR line ends, also when a CR ends one read and the stream', async () => {
    expect(await read('data: a\r\rdata: b\r', '\rdata: c\r', '\n\r')).toEqual(['a', 'b', 'c']);
    // A CRLF split by an empty read is still one line end, not two.
    expect(await read('data: a\r', new Uint8Array(0), '\ndata: b\n\n')).toEqual(['a\nb']);
  });

  it('drops a byte-order mark opening the stream, even split over reads, and replaces invalid bytes', async () => {
    const bom = Uint8Array.of(0xef, 0xbb, 0xbf);
    expect(await read(bom.slice(0, 2), bom.slice(2), 'data: a\n\n')).toEqual(['a']);
    expect(await read('data: \ufeffb\n\n')).toEqual(['\ufeffb']);
    expect(await read(Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0x0a, 0x0a))).toEqual(['\ufffd']);
  });

  it('reads a long event split over many reads intact', async () => {
    const ids = Array.from({ length: 11_000 }, (_, index) => index).join(',');
    const text = `data: {"prompt_token_ids":[${ids}]}\n\ndata: [DONE]\n\n`;
    const parts = Array.from({ length: Math.ceil(text.length / 997) }, (_, index) => text.slice(index * 997, (index + 1) * 997));
    expect(await read(...parts)).toEqual([`{"prompt_token_ids":[${ids}]}`, '[DONE]']);
  });

  it('keeps readers that interleave apart, and reads a line longer than the shared buffer', async () => {
    const huge = 'z'.repeat(1_200_000);
    const split = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));
    const [one, two] = await Promise.all([
      read(...split(`data: ${'a'.repeat(5000)}\n\ndata: ${huge}\n\n`, 4093)),
      read(...split(`data: ${'b'.repeat(7000)}\n\ndata: end`, 2999)),
    ]);
    expect(one).toEqual(['a'.repeat(5000), huge]);
    expect(two).toEqual(['b'.repeat(7000), 'end']);
  });
});
