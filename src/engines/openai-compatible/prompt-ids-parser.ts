/**
 * Parses vLLM's first stream chunk without parsing the whole prompt's ids every time. That chunk
 * carries `prompt_token_ids`, an agent prompt's ~12k ids (~70 KB of JSON), and `JSON.parse` of
 * it was the largest single item on the gateway's HTTP thread (12–14 %). In an agent session each
 * turn's prompt extends the previous one's (and sessions share their system prompt), so the
 * parser remembers recent id arrays with their JSON text: a new array's text is compared with the
 * remembered text sharing the longest prefix (string equality, a memory comparison), the ids of
 * that prefix are copied, and only the rest is parsed.
 *
 * Correctness never depends on what is remembered: the reused prefix is the same text, cut only
 * where parsing is known to resume (after a whole element), and everything else — the rest of the
 * array, the rest of the chunk — goes through `JSON.parse`. Anything unexpected (the key twice, an
 * escape anywhere outside the array, a non-integer, malformed text) returns `undefined`, and the
 * caller parses the chunk as usual, so its results and its errors are exactly `JSON.parse`'s.
 */
import { commonPrefixLength } from './common-prefix-length.js';

/** A plain loop: `Array.prototype.every` with a callback took 15 times as long over 11k ids. */
export function isTokenIdArray(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (let index = 0; index < value.length; index += 1) {
    if (!Number.isInteger(value[index])) return false;
  }
  return true;
}

const promptIdsKey = '"prompt_token_ids"';
/** Shorter arrays (a small prompt, a judge call) are parsed as they come: there is little to save. */
const minimumArrayCharacters = 4096;
/**
 * Ids are parsed in pieces of about this many characters, cut at a comma; the end of each piece is
 * a point a later array sharing the text can resume from, so a text that diverges parses again at
 * most one piece before the divergence (about 700 ids).
 */
const pieceCharacters = 4096;
/** An array of small integers costs 8 bytes per element (Node's V8 has no pointer compression). */
const bytesPerId = 8;

interface RememberedArray {
  /** Its own copy of the array's text, `[` to `]`. */
  text: string;
  /** Never handed out: callers get copies. */
  ids: number[];
  /** Offsets of the `[`, of the commas where pieces ended, and of the closing `]`, ascending. */
  resumeOffsets: number[];
  /** How many ids precede each of `resumeOffsets`. */
  resumeCounts: number[];
  bytes: number;
}

export interface PromptIdsParserOptions {
  /** Estimated bytes of remembered arrays (text, ids and resume points) held at most; default 32 Mi. */
  budgetBytes?: number;
}

export interface PromptChunkParse {
  /** `JSON.parse` of the chunk with `prompt_token_ids` replaced by `[]`. */
  json: Record<string, unknown>;
  /** Exactly what `JSON.parse` gives for `prompt_token_ids`: integers only. */
  promptTokenIds: number[];
}

export interface PromptIdsParser {
  /** `undefined` when the chunk has no long prompt ids or anything is unexpected: parse it as usual. */
  parseChunk(data: string): PromptChunkParse | undefined;
  readonly size: { entries: number; bytes: number };
}

export function createPromptIdsParser(options: PromptIdsParserOptions = {}): PromptIdsParser {
  const budget = options.budgetBytes ?? 32 * 1024 * 1024;
  /** By text, so the remembered text sharing the longest prefix with any text is next to its place. */
  const sorted: RememberedArray[] = [];
  /** Least recently used first. */
  const recent = new Set<RememberedArray>();
  let bytes = 0;

  function placeOf(text: string): number {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((sorted[middle] as RememberedArray).text < text) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  function touch(entry: RememberedArray): void {
    recent.delete(entry);
    recent.add(entry);
  }

  function remember(entry: RememberedArray, place: number): void {
    if (entry.bytes > budget) return;
    sorted.splice(place, 0, entry);
    recent.add(entry);
    bytes += entry.bytes;
    for (const oldest of recent) {
      if (bytes <= budget) break;
      recent.delete(oldest);
      sorted.splice(sorted.indexOf(oldest), 1);
      bytes -= oldest.bytes;
    }
  }

  function forget(entry: RememberedArray): number {
    recent.delete(entry);
    bytes -= entry.bytes;
    const index = sorted.indexOf(entry);
    sorted.splice(index, 1);
    return index;
  }

  function parseIds(text: string): number[] | undefined {
    const place = placeOf(text);
    const same = sorted[place];
    if (same !== undefined && same.text === text) {
      touch(same);
      return same.ids.slice();
    }
    const base = bestResume(text, sorted[place - 1], sorted[place]);
    const resumeOffsets = [0];
    const resumeCounts = [0];
    let resumeAt = 0;
    let count = 0;
    if (base !== undefined) {
      resumeAt = base.entry.resumeOffsets[base.point] as number;
      count = base.entry.resumeCounts[base.point] as number;
      resumeOffsets.push(...base.entry.resumeOffsets.slice(1, base.point + 1));
      resumeCounts.push(...base.entry.resumeCounts.slice(1, base.point + 1));
    }
    const pieces = parsePieces(text, resumeAt, count, resumeOffsets, resumeCounts);
    if (pieces === undefined) return undefined;
    const entry = base?.entry;
    if (entry === undefined) {
      const ids = ([] as number[]).concat(...pieces);
      remember(rememberedArray(text, ids.slice(), resumeOffsets, resumeCounts), place);
      return ids;
    }
    if (resumeAt === text.length - 1) {
      // The text is a shorter prefix of a remembered one, which serves it as well.
      touch(entry);
      return entry.ids.slice(0, count);
    }
    if (resumeAt === entry.text.length - 1) {
      // The text extends a remembered one (the next turn of a session): replace it.
      const ids = entry.ids.concat(...pieces);
      const index = forget(entry);
      for (const piece of pieces) for (const id of piece) entry.ids.push(id);
      remember(rememberedArray(text, entry.ids, resumeOffsets, resumeCounts), index < place ? place - 1 : place);
      return ids;
    }
    const ids = entry.ids.slice(0, count).concat(...pieces);
    remember(rememberedArray(text, ids.slice(), resumeOffsets, resumeCounts), place);
    return ids;
  }

  return {
    parseChunk(data) {
      const located = locatePromptIds(data);
      if (located === undefined) return undefined;
      const rest = `${data.slice(0, located.start)}[]${data.slice(located.end)}`;
      // Without a backslash no key can be spelled with escapes, so the key located is the chunk's only
      // `prompt_token_ids`: if the parsed chunk has that property at the top, its value is the array here.
      if (rest.includes('\\')) return undefined;
      let json: unknown;
      try {
        json = JSON.parse(rest);
      } catch {
        return undefined;
      }
      if (typeof json !== 'object' || json === null || Array.isArray(json) || !Object.hasOwn(json, 'prompt_token_ids')) return undefined;
      const promptTokenIds = parseIds(data.slice(located.start, located.end));
      return promptTokenIds === undefined ? undefined : { json: json as Record<string, unknown>, promptTokenIds };
    },
    get size() {
      return { entries: sorted.length, bytes };
    },
  };
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The text of the value of the first `"prompt_token_ids"` key, when it is a long array and the key's only occurrence. */
function locatePromptIds(data: string): { start: number; end: number } | undefined {
  const keyAt = data.indexOf(promptIdsKey);
  if (keyAt === -1) return undefined;
  let start = keyAt + promptIdsKey.length;
  while (isJsonWhitespace(data.charCodeAt(start))) start += 1;
  if (data[start] !== ':') return undefined;
  start += 1;
  while (isJsonWhitespace(data.charCodeAt(start))) start += 1;
  if (data[start] !== '[') return undefined;
  // Integers hold no `]`; if the array holds anything else, parsing this text fails.
  const end = data.indexOf(']', start) + 1;
  if (end === 0 || end - start < minimumArrayCharacters) return undefined;
  if (data.indexOf(promptIdsKey, end) !== -1) return undefined;
  return { start, end };
}

/**
 * Of the two remembered texts next to `text`'s place (one of them shares the longest prefix with
 * it), the one from which parsing resumes latest, with that resume point.
 */
function bestResume(text: string, before: RememberedArray | undefined, after: RememberedArray | undefined): { entry: RememberedArray; point: number } | undefined {
  let best: { entry: RememberedArray; point: number } | undefined;
  for (const entry of [before, after]) {
    if (entry === undefined) continue;
    const point = resumePoint(entry, text, commonPrefixLength(text, entry.text));
    if (best === undefined || (entry.resumeOffsets[point] as number) > (best.entry.resumeOffsets[best.point] as number)) best = { entry, point };
  }
  return best;
}

/**
 * The last resume point of `entry` inside the `shared` characters `text` has in common with it, or
 * at their end when `text` has a separator there too. Point 0 (the `[`) always qualifies.
 */
function resumePoint(entry: RememberedArray, text: string, shared: number): number {
  const offsets = entry.resumeOffsets;
  let low = 0;
  let high = offsets.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if ((offsets[middle] as number) <= shared) low = middle;
    else high = middle - 1;
  }
  if (offsets[low] === shared && text[shared] !== ',' && text[shared] !== ']') low -= 1;
  return low;
}

/**
 * Parses the ids after `resumeAt` (a `[`, a comma, or the closing `]`) piece by piece, appending
 * each piece's end as a resume point; `undefined` unless every piece is a non-empty list of integers.
 */
function parsePieces(text: string, resumeAt: number, countBefore: number, resumeOffsets: number[], resumeCounts: number[]): number[][] | undefined {
  const close = text.length - 1;
  const pieces: number[][] = [];
  let count = countBefore;
  for (let from = resumeAt + 1; from <= close; ) {
    let cut = close;
    if (from + pieceCharacters < close) {
      const comma = text.indexOf(',', from + pieceCharacters);
      if (comma !== -1) cut = comma;
    }
    let piece: unknown;
    try {
      piece = JSON.parse(`[${text.slice(from, cut)}]`);
    } catch {
      return undefined;
    }
    if (!isTokenIdArray(piece) || piece.length === 0) return undefined;
    pieces.push(piece);
    count += piece.length;
    resumeOffsets.push(cut);
    resumeCounts.push(count);
    from = cut + 1;
  }
  return pieces;
}

function rememberedArray(text: string, ids: number[], resumeOffsets: number[], resumeCounts: number[]): RememberedArray {
  // A copy: `text` is a slice of the stream's read buffer, which it would otherwise keep alive whole.
  const own = ` ${text}`.slice(1);
  return { text: own, ids, resumeOffsets, resumeCounts, bytes: own.length + ids.length * bytesPerId + resumeOffsets.length * 16 };
}
