import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseScoreResponse, parseTokenizeResponse } from './vllm-api.js';

describe('vLLM prompt_logprobs parsing', () => {
  it('picks each position by the stringified actual id and keeps alternatives ranked within top k', async () => {
    const json: unknown = JSON.parse(await readFile(new URL('./__fixtures__/vllm-completions-prompt-logprobs.json', import.meta.url), 'utf8'));
    const scored = parseScoreResponse(json, [151644, 9707, 0, 2585], 1, 1);
    expect(scored.map((position) => position.logprob)).toEqual([-7.4219, -0.2014, -0.0871]);
    // The actual token is listed with its rank (112) even outside the top k; it is not an alternative.
    expect(scored[0]?.top).toEqual([{ id: 40, text: 'I', logprob: -1.2031 }]);
    expect(() => parseScoreResponse(json, [151644, 9708, 0, 2585], 1, 1)).toThrow(/no log-prob for token 9708/);
    expect(() => parseScoreResponse(json, [1, 2], 1, 1)).toThrow(/expected 2 positions/);
  });

  it('reads /tokenize answers and rejects others', () => {
    expect(parseTokenizeResponse({ count: 2, max_model_len: 8, tokens: [4, 5], token_strs: null })).toEqual([4, 5]);
    expect(() => parseTokenizeResponse({ count: 2 })).toThrow(/tokenize/);
  });
});
