import { describe, expect, it } from 'vitest';
import { completion, instantPacing, nonStreamedDelayMs, writePaced, type UpstreamPacing } from './bench-upstream.js';

const paced: UpstreamPacing = { timeToFirstTokenMs: 50, timePerOutputTokenMs: 25, replyTokens: 4 };

/** Records every write and wait in order; a wait resolves at once, so no real time passes. */
function recorder() {
  const events: string[] = [];
  return {
    events,
    write: (chunk: string) => events.push(chunk.startsWith('data: [DONE]') ? 'done' : `chunk:${contentOf(chunk)}`),
    wait: async (ms: number) => {
      events.push(`wait:${ms}`);
    },
  };
}

function contentOf(chunk: string): string {
  const body = JSON.parse(chunk.slice(6)) as { choices: Array<{ delta?: { role?: string; content?: string } }>; usage?: unknown };
  if (body.usage !== undefined) return 'usage';
  const delta = body.choices[0]?.delta;
  return delta?.role === 'assistant' ? 'role' : (delta?.content ?? '');
}

describe('bench upstream pacing', () => {
  it('streams the first token after the time to first token, each later one after the time per token, and ends with the last', async () => {
    const { events, write, wait } = recorder();
    const answer = completion({ stream: true }, 100, paced.replyTokens).stream;
    if (answer === undefined) throw new Error('expected a streamed answer');
    await writePaced(answer, paced, write, wait);
    expect(events).toEqual([
      'wait:50', 'chunk:role', 'chunk:The',
      'wait:25', 'chunk: answer',
      'wait:25', 'chunk: is',
      'wait:25', 'chunk: 42',
      'chunk:usage', 'done',
    ]);
  });

  it('writes every chunk of a reply as long as asked, choice by choice, without waiting when instant', async () => {
    const { events, write, wait } = recorder();
    const answer = completion({ stream: true, n: 2 }, 100, 12).stream;
    if (answer === undefined) throw new Error('expected a streamed answer');
    await writePaced(answer, { ...instantPacing, replyTokens: 12 }, write, wait);
    expect(events.filter((event) => event.startsWith('wait'))).toEqual([]);
    // Two role chunks, 12 tokens for each of two choices, usage and [DONE].
    expect(events).toHaveLength(2 + 24 + 2);
    expect(events.slice(0, 4)).toEqual(['chunk:role', 'chunk:role', 'chunk:The', 'chunk:The']);
  });

  it('answers a non-streamed request after the whole reply would have been decoded, with as many tokens as asked', () => {
    expect(nonStreamedDelayMs(paced)).toBe(50 + 3 * 25);
    expect(nonStreamedDelayMs(instantPacing)).toBe(0);
    const body = JSON.parse(completion({ stream: false }, 100, 7).json ?? '{}') as { choices: Array<{ token_ids: number[] }> };
    expect(body.choices[0]?.token_ids).toHaveLength(7);
  });
});
