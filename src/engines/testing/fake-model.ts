/**
 * The deterministic "model" behind the fake vLLM/SGLang server and the test chat renderer.
 *
 * Prompts are tokenized as UTF-8 bytes of a ChatML-like rendering (id = byte + 3; ids 0..2 are
 * special). Replies are tokenized into word pieces: a small fixed vocabulary of words gets ids
 * above the byte range, everything else falls back to bytes, so multi-byte characters split
 * across tokens exactly as they do with real byte-level BPE. Log-probs come from a fixed bigram
 * function, so scoring a sequence reproduces the log-probs it was sampled with.
 */

export const padTokenId = 0;
/** Ends an assistant turn (`<|im_end|>`); the fake's only stop token. */
export const endOfTurnTokenId = 1;
export const startOfTurnTokenId = 2;
const byteOffset = 3;
const firstWordId = 256 + byteOffset;

const specialTokenTexts = ['<|pad|>', '<|im_end|>', '<|im_start|>'];

const wordVocabulary = [
  ' ', 'You', 'said', ':', '<tool_call>', '</tool_call>', 'the', 'weather', 'in', 'is', 'a', 'and',
  'to', 'of', 'I', 'it', 'what', 'What', 'hello', 'Hello', 'one', 'two', 'three', 'four', 'five',
  'name', 'arguments', 'query', '"', '{', '}', ',',
];
const wordIds = new Map(wordVocabulary.map((word, index) => [word, firstWordId + index]));

export const fakeVocabularySize = firstWordId + wordVocabulary.length;

const utf8Encoder = new TextEncoder();

export function isSpecialTokenId(tokenId: number): boolean {
  return tokenId >= 0 && tokenId < byteOffset;
}

/** Prompt tokenization: bytes only. */
export function encodeBytes(text: string): number[] {
  return Array.from(utf8Encoder.encode(text), (byte) => byte + byteOffset);
}

const piecePattern = /<\/?tool_call>|\s+|[A-Za-z]+|[^A-Za-z\s]/gu;

/** Reply tokenization: known words as one token, the rest as bytes. */
export function encodeWords(text: string): number[] {
  const ids: number[] = [];
  for (const match of text.matchAll(piecePattern)) {
    const wordId = wordIds.get(match[0]);
    if (wordId === undefined) ids.push(...encodeBytes(match[0]));
    else ids.push(wordId);
  }
  return ids;
}

/** The bytes a token stands for; special tokens stand for none. */
export function tokenBytes(tokenId: number): Uint8Array {
  if (tokenId >= byteOffset && tokenId < firstWordId) return Uint8Array.of(tokenId - byteOffset);
  const word = wordVocabulary[tokenId - firstWordId];
  return word === undefined ? new Uint8Array(0) : utf8Encoder.encode(word);
}

/** The text of one token alone; partial UTF-8 renders lossy, special tokens by name. */
export function tokenText(tokenId: number): string {
  const special = specialTokenTexts[tokenId];
  if (special !== undefined) return special;
  return Buffer.from(tokenBytes(tokenId)).toString('utf8');
}

/** Decodes ids, skipping special tokens. */
export function decodeTokens(tokenIds: readonly number[]): string {
  return Buffer.concat(tokenIds.map((id) => tokenBytes(id))).toString('utf8');
}

/** A bigram "model": the log-prob of `tokenId` after `previousId`, always in [-1, -0.03]. */
export function fakeLogprob(previousId: number, tokenId: number): number {
  return -(((previousId * 31 + tokenId * 17) % 97) + 3) / 100;
}

export interface FakeAlternative {
  id: number;
  logprob: number;
}

/** The `count` most likely tokens after `previousId` when `tokenId` was sampled, best first. */
export function fakeTopAlternatives(previousId: number, tokenId: number, count: number): FakeAlternative[] {
  const sampled = fakeLogprob(previousId, tokenId);
  const alternatives: FakeAlternative[] = [];
  for (let rank = 0; rank < count; rank += 1) {
    if (rank === 0) alternatives.push({ id: tokenId, logprob: sampled });
    else alternatives.push({ id: (tokenId + rank) % fakeVocabularySize, logprob: sampled - rank });
  }
  return alternatives;
}

export interface FakeTurn {
  role: string;
  content: string;
  toolCalls?: { name: string; arguments: string }[];
}

export function renderToolCallText(name: string, argumentsText: string): string {
  return `<tool_call>{"name": ${JSON.stringify(name)}, "arguments": ${argumentsText}}</tool_call>`;
}

function turnBody(turn: FakeTurn): string {
  const calls = (turn.toolCalls ?? []).map((call) => renderToolCallText(call.name, call.arguments));
  return `${turn.role}\n${turn.content}${calls.join('')}`;
}

const toolsHeader = '# Tools\n';

function withToolsTurn(turns: FakeTurn[], toolNames: string[]): FakeTurn[] {
  if (toolNames.length === 0) return turns;
  return [{ role: 'system', content: `${toolsHeader}${JSON.stringify(toolNames)}` }, ...turns];
}

/** ChatML-like prompt ids with the generation prompt; tools become a leading system turn. */
export function renderPromptIds(turns: FakeTurn[], toolNames: string[]): number[] {
  const ids: number[] = [];
  for (const turn of withToolsTurn(turns, toolNames)) {
    ids.push(startOfTurnTokenId, ...encodeBytes(turnBody(turn)), endOfTurnTokenId, ...encodeBytes('\n'));
  }
  ids.push(startOfTurnTokenId, ...encodeBytes('assistant\n'));
  return ids;
}

export function renderPromptText(turns: FakeTurn[], toolNames: string[]): string {
  const parts = withToolsTurn(turns, toolNames).map((turn) => `<|im_start|>${turnBody(turn)}<|im_end|>\n`);
  return `${parts.join('')}<|im_start|>assistant\n`;
}

/** Recovers what the fake model conditions on from rendered prompt ids (SGLang `/generate`). */
export function readPromptIds(promptIds: readonly number[]): { lastUserText: string; toolNames: string[] } {
  let lastUserText = '';
  let toolNames: string[] = [];
  let index = 0;
  while (index < promptIds.length) {
    if (promptIds[index] !== startOfTurnTokenId) {
      index += 1;
      continue;
    }
    const end = promptIds.indexOf(endOfTurnTokenId, index + 1);
    const body = decodeTokens(promptIds.slice(index + 1, end === -1 ? promptIds.length : end));
    if (body.startsWith('user\n')) lastUserText = body.slice('user\n'.length);
    if (body.startsWith(`system\n${toolsHeader}`)) {
      toolNames = parseToolNames(body.slice(`system\n${toolsHeader}`.length));
    }
    index = end === -1 ? promptIds.length : end + 1;
  }
  return { lastUserText, toolNames };
}

function parseToolNames(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

export interface FakeReply {
  /** The raw generated text, tool-call markup included. */
  text: string;
  toolCall: { name: string; arguments: string } | null;
}

/** The deterministic reply: a tool call when asked about the weather with tools, else an echo. */
export function fakeReply(lastUserText: string, toolNames: string[], choiceIndex: number): FakeReply {
  const firstTool = toolNames[0];
  if (firstTool !== undefined && /\bweather\b/i.test(lastUserText)) {
    const argumentsText = JSON.stringify({ query: lastUserText, choice: choiceIndex });
    return { text: renderToolCallText(firstTool, argumentsText), toolCall: { name: firstTool, arguments: argumentsText } };
  }
  const suffix = choiceIndex === 0 ? '' : ` #${choiceIndex}`;
  return { text: `You said: ${lastUserText}${suffix}`, toolCall: null };
}

export interface FakeSampledToken {
  id: number;
  logprob: number;
}

export interface FakeSample {
  tokens: FakeSampledToken[];
  /** Visible text: raw decoded text cut before a matched stop string. */
  text: string;
  finish: 'stop' | 'length';
  /** The stop string that ended generation, or the stop token id. */
  matched: string | number | null;
}

/**
 * "Samples" a reply after `promptIds`: the reply's tokens then the end-of-turn token, cut by
 * `maxTokens` (finish `length`) or right after the token that completes a stop string.
 */
export function sampleReply(promptIds: readonly number[], replyText: string, maxTokens: number, stops: readonly string[]): FakeSample {
  const planned = [...encodeWords(replyText), endOfTurnTokenId];
  const tokens: FakeSampledToken[] = [];
  let previous = promptIds[promptIds.length - 1] ?? padTokenId;
  for (const id of planned) {
    if (tokens.length >= maxTokens) break;
    tokens.push({ id, logprob: fakeLogprob(previous, id) });
    previous = id;
    if (id === endOfTurnTokenId) return { tokens, text: decodeTokens(tokens.map((token) => token.id)), finish: 'stop', matched: id };
    const text = decodeTokens(tokens.map((token) => token.id));
    for (const stop of stops) {
      const at = stop === '' ? -1 : text.indexOf(stop);
      if (at !== -1) return { tokens, text: text.slice(0, at), finish: 'stop', matched: stop };
    }
  }
  return { tokens, text: decodeTokens(tokens.map((token) => token.id)), finish: 'length', matched: null };
}

/**
 * The visible text each sampled token adds when streaming, as vLLM's incremental detokenizer
 * produces it: never half a character, and the last `longest stop - 1` characters held back
 * until they cannot start a stop string, so a stop string never leaks into a delta.
 */
export function streamedTextDeltas(sample: FakeSample, stops: readonly string[]): string[] {
  const holdBack = Math.max(0, ...stops.map((stop) => stop.length - 1));
  const decoder = new TextDecoder('utf-8');
  let decoded = '';
  let emitted = 0;
  return sample.tokens.map((token, index) => {
    decoded += decoder.decode(tokenBytes(token.id), { stream: true });
    const isLast = index === sample.tokens.length - 1;
    const visible = isLast ? sample.text : decoded.slice(0, Math.max(emitted, decoded.length - holdBack));
    const delta = visible.slice(emitted);
    emitted = visible.length;
    return delta;
  });
}
