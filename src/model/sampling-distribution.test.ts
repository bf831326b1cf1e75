import { describe, expect, it } from 'vitest';
import { chooseToken, largestIndices } from './sampling-distribution.js';
import { createSeededRandom } from '../core/seeded-random.js';

const logits = Float32Array.from([2, 1, 0, -1, 3]);

function frequencies(options: { temperature: number; topP: number; topK: number }, draws = 4000): number[] {
  const random = createSeededRandom(9);
  const counts = new Array<number>(logits.length).fill(0);
  for (let draw = 0; draw < draws; draw += 1) {
    const { tokenId } = chooseToken(logits, { ...options, topLogprobs: 0 }, random);
    counts[tokenId] = (counts[tokenId] ?? 0) + 1;
  }
  return counts.map((count) => count / draws);
}

function softmax(values: number[]): number[] {
  const maximum = Math.max(...values);
  const exponentials = values.map((value) => Math.exp(value - maximum));
  const total = exponentials.reduce((sum, value) => sum + value, 0);
  return exponentials.map((value) => value / total);
}

describe('chooseToken', () => {
  it('samples the tempered softmax and records its log-prob', () => {
    const expected = softmax(Array.from(logits, (value) => value / 2));
    frequencies({ temperature: 2, topP: 1, topK: 0 }).forEach((frequency, index) => expect(Math.abs(frequency - (expected[index] ?? 0))).toBeLessThan(0.03));
    const choice = chooseToken(logits, { temperature: 2, topP: 1, topK: 0, topLogprobs: 2 }, createSeededRandom(1));
    expect(choice.logprob).toBeCloseTo(Math.log(expected[choice.tokenId] ?? 0), 6);
    expect(choice.top.map((entry) => entry.tokenId)).toEqual([4, 0]);
  });

  it('truncates with top-k then top-p but records the untruncated log-prob', () => {
    const topK = frequencies({ temperature: 1, topP: 1, topK: 2 });
    expect(topK[1]).toBe(0);
    const base = softmax(Array.from(logits));
    expect(Math.abs((topK[4] ?? 0) - (base[4] ?? 0) / ((base[4] ?? 0) + (base[0] ?? 0)))).toBeLessThan(0.03);
    // p(4) ≈ 0.64 < 0.7, so the nucleus is {4, 0}.
    const nucleus = frequencies({ temperature: 1, topP: 0.7, topK: 0 });
    expect((nucleus[4] ?? 0) + (nucleus[0] ?? 0)).toBe(1);
    const choice = chooseToken(logits, { temperature: 1, topP: 0.7, topK: 0, topLogprobs: 0 }, createSeededRandom(2));
    expect(choice.logprob).toBeCloseTo(Math.log(base[choice.tokenId] ?? 0), 6);
  });

  it('is greedy at temperature 0, with the untempered log-prob', () => {
    const choice = chooseToken(logits, { temperature: 0, topP: 0.1, topK: 3, topLogprobs: 0 }, createSeededRandom(3));
    expect(choice.tokenId).toBe(4);
    expect(choice.logprob).toBeCloseTo(Math.log(softmax(Array.from(logits))[4] ?? 0), 6);
  });
});

describe('largestIndices', () => {
  it('returns the largest values first', () => {
    expect(largestIndices([0.1, 5, -2, 7, 5.5], 3)).toEqual([3, 4, 1]);
    expect(largestIndices([1, 2], 5)).toEqual([1, 0]);
  });
});
