/**
 * Minimal server-sent-events reader: yields the `data` of each event (multi-line data joined
 * with `\n`), accepting `\n`, `\r\n` and `\r` line ends and ignoring comments and other fields.
 *
 * Lines are cut in the bytes and each is decoded once, whole: vLLM's first event carries the
 * prompt's ids (~70 KB for an agent prompt) and arrives in several reads, and decoding every read
 * and then joining the texts copied that event twice. Cutting bytes is safe in UTF-8, where the
 * bytes of `\n` and `\r` never occur inside another character; a character split between reads is
 * decoded once its line is whole, and invalid bytes become U+FFFD, as a streaming decoder does.
 * Linear in the stream's length: each line end is searched for once.
 */

const lineFeed = 0x0a;
const carriageReturn = 0x0d;

/**
 * Where a line split over reads is put together before it is decoded, shared by every reader: a
 * fresh buffer per line would be ~70 KB of memory outside the JavaScript heap per request, and
 * V8 starts a full garbage collection for every 64 MB of that. Safe to share because a line is
 * copied in and decoded without a pause. Lines longer than `scratchLimit` get their own buffer.
 */
let scratch = Buffer.allocUnsafeSlow(0);
const scratchLimit = 1024 * 1024;

/** The first `\n` or `\r` at or after `from`, or -1. */
function lineEndOf(bytes: Uint8Array, from: number, hasCarriageReturn: boolean): number {
  if (!hasCarriageReturn) return bytes.indexOf(lineFeed, from);
  for (let index = from; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === lineFeed || byte === carriageReturn) return index;
  }
  return -1;
}

export async function* readServerSentEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  /** Bytes of the line not yet ended, from earlier reads. */
  let pending: Buffer[] = [];
  /** As `TextDecoder` did (and the SSE format asks), a byte-order mark opening the stream is dropped. */
  let atStart = true;
  /** The previous read ended with `\r`: a `\n` opening this one belongs to that line end. */
  let afterCarriageReturn = false;
  let dataLines: string[] = [];

  /** The event the line `bytes[start, end)` completes, if any. */
  function take(bytes: Buffer, start: number, end: number): string | undefined {
    let line = bytes.toString('utf8', start, end);
    if (atStart) {
      atStart = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line === '') {
      if (dataLines.length === 0) return undefined;
      const event = dataLines.length === 1 ? (dataLines[0] as string) : dataLines.join('\n');
      dataLines = [];
      return event;
    }
    if (line.startsWith('data:')) {
      const value = line.slice('data:'.length);
      dataLines.push(value.startsWith(' ') ? value.slice(1) : value);
    }
    return undefined;
  }

  /** The event the line completes that began in earlier reads and ends at `bytes[end]`. */
  function takeSplit(bytes: Buffer, end: number): string | undefined {
    const parts = [...pending, bytes.subarray(0, end)];
    pending = [];
    const length = parts.reduce((sum, part) => sum + part.length, 0);
    if (length > scratchLimit) return take(Buffer.concat(parts, length), 0, length);
    if (scratch.length < length) scratch = Buffer.allocUnsafeSlow(Math.min(scratchLimit, Math.max(length, 2 * scratch.length)));
    let offset = 0;
    for (const part of parts) offset += part.copy(scratch, offset);
    return take(scratch, 0, length);
  }

  for await (const chunk of chunks) {
    // An empty read must not end the wait for the `\n` of a `\r\n` split over reads.
    if (chunk.byteLength === 0) continue;
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = afterCarriageReturn && bytes[0] === lineFeed ? 1 : 0;
    afterCarriageReturn = false;
    const hasCarriageReturn = bytes.indexOf(carriageReturn, start) !== -1;
    for (let end = lineEndOf(bytes, start, hasCarriageReturn); end !== -1; end = lineEndOf(bytes, start, hasCarriageReturn)) {
      const event = pending.length === 0 ? take(bytes, start, end) : takeSplit(bytes, end);
      if (event !== undefined) yield event;
      start = end + 1;
      if (bytes[end] === carriageReturn) {
        if (start === bytes.length) afterCarriageReturn = true;
        else if (bytes[start] === lineFeed) start += 1;
      }
    }
    if (start < bytes.length) pending.push(bytes.subarray(start));
  }
  // A final event without its blank line still counts: some servers close right after it.
  if (pending.length > 0) {
    const event = takeSplit(Buffer.alloc(0), 0);
    if (event !== undefined) yield event;
  }
  if (dataLines.length > 0) yield dataLines.join('\n');
}
