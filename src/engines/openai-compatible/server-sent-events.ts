/**
 * Minimal server-sent-events reader: yields the `data` of each event (multi-line data joined
 * with `\n`), accepting `\n`, `\r\n` and `\r` line ends and ignoring comments and other fields.
 */
export async function* readServerSentEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let dataLines: string[] = [];

  function* takeLines(final: boolean): Generator<string> {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      // A trailing '\r' may be half of '\r\n': wait for the next chunk unless the stream ended.
      if (match === null || (match[0] === '\r' && match.index === buffer.length - 1 && !final)) return;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === '') {
        if (dataLines.length > 0) yield dataLines.join('\n');
        dataLines = [];
      } else if (line.startsWith('data:')) {
        const value = line.slice('data:'.length);
        dataLines.push(value.startsWith(' ') ? value.slice(1) : value);
      }
    }
  }

  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* takeLines(false);
  }
  buffer += decoder.decode();
  yield* takeLines(true);
  // A final event without its blank line still counts: some servers close right after it.
  if (buffer.startsWith('data:')) dataLines.push(buffer.slice('data:'.length).trimStart());
  if (dataLines.length > 0) yield dataLines.join('\n');
}
