import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseChatChunk } from './chat-completions-api.js';
import { createPromptIdsParser, type PromptIdsParser } from './prompt-ids-parser.js';

/** A deterministic pseudo-random sequence, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const systemPrompt = Array.from({ length: 3000 }, (_, index) => (index * 7919 + 13) % 151_000);
const sessionTail = (session: number, length: number) => Array.from({ length }, (_, index) => (session * 1009 + index * 31) % 151_000);

function firstChunk(idsText: string, extra = ''): string {
  return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${extra},"prompt_token_ids":${idsText}}`;
}

/** What `JSON.parse` makes of the chunk, or its error message. */
function expected(data: string): unknown {
  try {
    return parseChatChunk(data);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function actual(data: string, parser: PromptIdsParser): unknown {
  try {
    return parseChatChunk(data, parser);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Characters `JSON.parse` is given while `run` runs. */
function parsedCharacters(run: () => void): number {
  const parse = JSON.parse;
  let characters = 0;
  const spy = vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    characters += text.length;
    return parse(text, reviver);
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return characters;
}

afterEach(() => vi.restoreAllMocks());

describe('createPromptIdsParser', () => {
  it('gives exactly what JSON.parse gives for fresh, repeated, extended, diverging and shorter prompts', () => {
    const parser = createPromptIdsParser();
    const turn1 = [...systemPrompt, ...sessionTail(1, 400)];
    const turn2 = [...turn1, ...sessionTail(2, 300)];
    const otherSession = [...systemPrompt, ...sessionTail(3, 500)];
    const shorter = turn2.slice(0, 2500);
    const withinAnElement = [...turn1.slice(0, -1), turn1[turn1.length - 1] ?? 0, 7];
    for (const ids of [turn1, turn1, turn2, otherSession, shorter, turn2, withinAnElement]) {
      const data = firstChunk(JSON.stringify(ids));
      const known = parser.parseChunk(data);
      expect(known?.promptTokenIds).toEqual(ids);
      expect(actual(data, parser)).toEqual(expected(data));
    }
  });

  it('parses only what follows the remembered prefix', () => {
    const parser = createPromptIdsParser();
    const turn1 = [...systemPrompt, ...sessionTail(1, 400)];
    const turn2 = [...turn1, ...sessionTail(2, 50)];
    parser.parseChunk(firstChunk(JSON.stringify(turn1)));
    const data = firstChunk(JSON.stringify(turn2));
    const characters = parsedCharacters(() => expect(parser.parseChunk(data)?.promptTokenIds).toEqual(turn2));
    const newIdsText = JSON.stringify(turn2).length - JSON.stringify(turn1).length;
    // The new ids, the chunk without its ids, a few brackets.
    expect(characters).toBeLessThan(newIdsText + 400);
    // Another session sharing the system prompt parses at most one piece before where it diverges.
    const other = [...systemPrompt, ...sessionTail(3, 20)];
    const otherCharacters = parsedCharacters(() => expect(parser.parseChunk(firstChunk(JSON.stringify(other)))?.promptTokenIds).toEqual(other));
    expect(otherCharacters).toBeLessThan(JSON.stringify(sessionTail(3, 20)).length + 400 + 4200);
  });

  it('resumes from the remembered text that ends latest inside the new one', () => {
    const parser = createPromptIdsParser();
    const long = [...systemPrompt, ...sessionTail(1, 2000)];
    const short = long.slice(0, 3500);
    const between = long.slice(0, 3600);
    parser.parseChunk(firstChunk(JSON.stringify(long)));
    parser.parseChunk(firstChunk(JSON.stringify(short)));
    const data = firstChunk(JSON.stringify(between));
    const characters = parsedCharacters(() => expect(parser.parseChunk(data)?.promptTokenIds).toEqual(between));
    expect(characters).toBeLessThan(JSON.stringify(between).length - JSON.stringify(short).length + 400);
  });

  it('handles whitespace, unusual numbers and text cut inside an element as JSON.parse does', () => {
    const parser = createPromptIdsParser();
    const ids = [...systemPrompt, ...sessionTail(1, 100)];
    const canonical = JSON.stringify(ids);
    const variants = [
      canonical,
      JSON.stringify(ids, null, 1),
      `[ ${ids.join(' , ')} ]`,
      `[\n${ids.join(',\r\n\t')}\n]`,
      // Extends the canonical text inside its last element, and with other number spellings.
      `${canonical.slice(0, -1)}7]`,
      `${canonical.slice(0, -1)}.5]`,
      `${canonical.slice(0, -1)}e2]`,
      `${canonical.slice(0, -1)},1e3,-0,2.0]`,
      `${canonical.slice(0, -1)},-5]`,
      `${canonical.slice(0, -1)},99999999999999999999]`,
      `${canonical.slice(0, -1)},1.5]`,
      `[${canonical.slice(1, 6000)}.25${canonical.slice(6000)}`,
    ];
    for (const text of variants) {
      const data = firstChunk(text);
      expect(actual(data, parser)).toEqual(expected(data));
    }
  });

  it('falls back to JSON.parse, errors included, for malformed or unexpected chunks', () => {
    const parser = createPromptIdsParser();
    const ids = [...systemPrompt, ...sessionTail(1, 100)];
    const canonical = JSON.stringify(ids);
    parser.parseChunk(firstChunk(canonical));
    const body = canonical.slice(1, -1);
    const cases = [
      firstChunk(`[${body},,1]`),
      firstChunk(`[${body},]`),
      firstChunk(`[,${body}]`),
      firstChunk(`[${body}`).slice(0, -1),
      firstChunk(`[${body},"7"]`),
      firstChunk(`[${body},[7]]`),
      firstChunk(`[${body},null]`),
      firstChunk(`[${body},true]`),
      firstChunk(canonical, ',"prompt_token_ids":[1,2]'),
      firstChunk(canonical, ',"prompt\\u005ftoken_ids":[1,2]'),
      `${firstChunk(canonical).slice(0, -1)},"prompt\\u005ftoken_ids":[]}`,
      `${firstChunk(canonical).slice(0, -1)},"prompt\\u005ftoken_ids":null}`,
      firstChunk(canonical).replace('"content":""', '"content":"\\"prompt_token_ids\\":[1]"'),
      `{"choices":[{"index":0,"prompt_token_ids":${canonical}}]}`,
      `{"choices":[],"x":{"prompt_token_ids":${canonical}}}`,
      `[{"prompt_token_ids":${canonical}}]`,
      `{"prompt_token_ids":${canonical}} trailing`,
      `{"prompt_token_ids":${canonical}`,
      `{"prompt_token_ids" : \n${canonical} }`,
      `{"prompt_token_ids":${canonical},"choices":[{"index":"zero"}]}`,
      `{"prompt_token_ids":${canonical.slice(0, -1)},1.5]}`,
      `{"prompt_token_ids":"${canonical}"}`,
    ];
    for (const data of cases) expect(actual(data, parser)).toEqual(expected(data));
  });

  it('matches JSON.parse over random sessions that extend, diverge, shrink and reformat', () => {
    const next = random(42);
    const remembering = createPromptIdsParser({ budgetBytes: 2 * 1024 * 1024 });
    let handled = 0;
    const parser: PromptIdsParser = {
      parseChunk(data) {
        const known = remembering.parseChunk(data);
        if (known !== undefined) handled += 1;
        return known;
      },
      get size() {
        return remembering.size;
      },
    };
    const sessions: number[][] = [[...systemPrompt]];
    for (let step = 0; step < 300; step += 1) {
      const pick = Math.floor(next() * sessions.length);
      const previous = sessions[pick] ?? systemPrompt;
      const roll = next();
      let ids: number[];
      if (roll < 0.45) ids = [...previous, ...sessionTail(step, 1 + Math.floor(next() * 200))];
      else if (roll < 0.65) ids = [...previous.slice(0, Math.floor(next() * previous.length)), ...sessionTail(step, Math.floor(next() * 50))];
      else if (roll < 0.75) ids = previous.slice(0, 1 + Math.floor(next() * previous.length));
      else if (roll < 0.85) {
        ids = [...previous];
        ids[Math.floor(next() * ids.length)] = Math.floor(next() * 151_000);
      } else ids = [...previous];
      sessions.push(ids);
      let text = JSON.stringify(ids);
      if (next() < 0.1) text = text.replaceAll(',', next() < 0.5 ? ', ' : ' ,');
      if (next() < 0.05) text = `${text.slice(0, -1)},${next() < 0.5 ? '0.5' : '"x"'}]`;
      const data = firstChunk(text);
      expect(actual(data, parser)).toEqual(expected(data));
    }
    expect(parser.size.entries).toBeGreaterThan(1);
    // Most chunks went through the parser rather than past it.
    expect(handled).toBeGreaterThan(200);
  });

  it('stays within its budget, forgetting the least recently used arrays first', () => {
    const budgetBytes = 600_000;
    const parser = createPromptIdsParser({ budgetBytes });
    const chunks = Array.from({ length: 12 }, (_, session) => firstChunk(JSON.stringify([...sessionTail(session + 100, 3000), ...systemPrompt])));
    for (const data of chunks) {
      parser.parseChunk(data);
      expect(parser.size.bytes).toBeLessThanOrEqual(budgetBytes);
    }
    const { entries } = parser.size;
    expect(entries).toBeGreaterThan(1);
    expect(entries).toBeLessThan(chunks.length);
    // The newest is remembered (parsed with next to nothing), the oldest was forgotten (parsed whole).
    const newest = chunks[chunks.length - 1] ?? '';
    expect(parsedCharacters(() => parser.parseChunk(newest))).toBeLessThan(1000);
    const oldest = chunks[0] ?? '';
    expect(parsedCharacters(() => parser.parseChunk(oldest))).toBeGreaterThan(oldest.length - 1000);
  });

  it('does not remember an array larger than its whole budget, nor short arrays', () => {
    const parser = createPromptIdsParser({ budgetBytes: 10_000 });
    const data = firstChunk(JSON.stringify(systemPrompt));
    expect(actual(data, parser)).toEqual(expected(data));
    expect(parser.size).toEqual({ entries: 0, bytes: 0 });
    const roomy = createPromptIdsParser();
    expect(roomy.parseChunk(firstChunk('[1,2,3]'))).toBeUndefined();
    expect(roomy.size.entries).toBe(0);
  });

  it('hands out copies: changing a result changes no later result', () => {
    const parser = createPromptIdsParser();
    const ids = [...systemPrompt, ...sessionTail(1, 10)];
    const data = firstChunk(JSON.stringify(ids));
    const first = parser.parseChunk(data)?.promptTokenIds ?? [];
    first.fill(0);
    expect(parser.parseChunk(data)?.promptTokenIds).toEqual(ids);
    const longer = [...ids, 5, 6];
    const second = parser.parseChunk(firstChunk(JSON.stringify(longer)))?.promptTokenIds ?? [];
    second.length = 0;
    expect(parser.parseChunk(firstChunk(JSON.stringify(longer)))?.promptTokenIds).toEqual(longer);
    expect(parser.parseChunk(data)?.promptTokenIds).toEqual(ids);
  });
});
