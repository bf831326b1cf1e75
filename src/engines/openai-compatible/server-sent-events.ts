/**
 * Minimal server-sent-events reader: yields the `data` of each event (multi-line data joined
 * with `\n`), accepting `\n`, `\r\n` and `\r` line ends and ignoring comments and other fields.
 *
 * Linear in the stream's length: vLLM's first event carries the prompt's ids (~60 KB for an
 * agent prompt) and arrives in several reads, so line ends are normalized once per read and each
 * line end is searched for only in text not searched before. Decoded with Node's `StringDecoder`:
 * `TextDecoder` in streaming mode took nine times as long for that event (ICU instead of simdutf).
 */
import { StringDecoder } from 'node:string_decoder';

export async function* readServerSentEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  /** As `TextDecoder` did (and the SSE format asks), a byte-order mark opening the stream is dropped. */
  let atStart = true;
  let buffer = '';
  /** No `\n` in `buffer` before this offset. */
  let searched = 0;
  /** A read that ended in `\r` may continue with `\n`: held back until the next read. */
  let heldCarriageReturn = false;
  let dataLines: string[] = [];

  function append(decoded: string, final: boolean): void {
    let text = decoded;
    if (atStart && text !== '') {
      atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let value = heldCarriageReturn ? `\r${text}` : text;
    heldCarriageReturn = false;
    if (value.includes('\r')) {
      if (!final && value.endsWith('\r')) {
        heldCarriageReturn = true;
        value = value.slice(0, -1);
      }
      value = value.replace(/\r\n?/g, '\n');
    }
    buffer += value;
  }

  function* takeLines(): Generator<string> {
    let start = 0;
    for (;;) {
      const end = buffer.indexOf('\n', Math.max(start, searched));
      if (end === -1) break;
      const line = buffer.slice(start, end);
      start = end + 1;
      if (line === '') {
        if (dataLines.length > 0) yield dataLines.length === 1 ? (dataLines[0] as string) : dataLines.join('\n');
        dataLines = [];
      } else if (line.startsWith('data:')) {
        const value = line.slice('data:'.length);
        dataLines.push(value.startsWith(' ') ? value.slice(1) : value);
      }
    }
    buffer = buffer.slice(start);
    searched = buffer.length;
  }

  for await (const chunk of chunks) {
    append(decoder.write(chunk), false);
    yield* takeLines();
  }
  append(decoder.end(), true);
  yield* takeLines();
  // A final event without its blank line still counts: some servers close right after it.
  if (buffer.startsWith('data:')) dataLines.push(buffer.slice('data:'.length).trimStart());
  if (dataLines.length > 0) yield dataLines.join('\n');
}
