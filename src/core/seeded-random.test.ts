import { describe, expect, it } from 'vitest';
import { createSeededRandom, deriveSamplingSeed, deriveSeed } from './seeded-random.js';

describe('createSeededRandom', () => {
  it('replays the same sequence from the same seed and differs across seeds', () => {
    const first = createSeededRandom(42);
    const second = createSeededRandom(42);
    const other = createSeededRandom(43);
    const a = Array.from({ length: 20 }, () => first.next());
    const b = Array.from({ length: 20 }, () => second.next());
    const c = Array.from({ length: 20 }, () => other.next());
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('accepts string seeds and large numbers', () => {
    expect(createSeededRandom('abc').next()).toBe(createSeededRandom('abc').next());
    expect(createSeededRandom(2 ** 40).next()).not.toBe(createSeededRandom(0).next());
  });

  it('stays in [0, 1) with a roughly uniform mean', () => {
    const random = createSeededRandom(7);
    let sum = 0;
    for (let index = 0; index < 10_000; index += 1) {
      const value = random.next();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      sum += value;
    }
    expect(sum / 10_000).toBeGreaterThan(0.48);
    expect(sum / 10_000).toBeLessThan(0.52);
  });

  it('draws integers over the whole inclusive range', () => {
    const random = createSeededRandom(1);
    const seen = new Set<number>();
    for (let index = 0; index < 1000; index += 1) seen.add(random.integer(-2, 3));
    expect([...seen].sort((x, y) => x - y)).toEqual([-2, -1, 0, 1, 2, 3]);
    expect(() => random.integer(3, 2)).toThrow(RangeError);
    expect(() => random.integer(0.5, 2)).toThrow(RangeError);
  });

  it('picks, shuffles without mutating, and honours chance', () => {
    const random = createSeededRandom(5);
    const items = ['a', 'b', 'c', 'd'] as const;
    const shuffled = random.shuffle(items);
    expect([...shuffled].sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(items).toEqual(['a', 'b', 'c', 'd']);
    expect(() => random.pick([])).toThrow(RangeError);
    let hits = 0;
    for (let index = 0; index < 5000; index += 1) if (random.chance(0.2)) hits += 1;
    expect(hits / 5000).toBeGreaterThan(0.17);
    expect(hits / 5000).toBeLessThan(0.23);
    expect(random.chance(0)).toBe(false);
  });

  it('draws weighted entries in proportion and skips zero weights', () => {
    const random = createSeededRandom(9);
    const counts = { a: 0, b: 0, c: 0 };
    for (let index = 0; index < 6000; index += 1) {
      counts[random.weighted([['a', 1], ['b', 2], ['c', 0]] as const)] += 1;
    }
    expect(counts.c).toBe(0);
    expect(counts.b / counts.a).toBeGreaterThan(1.8);
    expect(counts.b / counts.a).toBeLessThan(2.2);
    expect(() => random.weighted([['a', 0]])).toThrow(RangeError);
  });
});

describe('deriveSeed', () => {
  it('is deterministic and separates labels', () => {
    expect(deriveSeed(1, 'train', 3)).toBe(deriveSeed(1, 'train', 3));
    expect(deriveSeed(1, 'train', 3)).not.toBe(deriveSeed(1, 'train', 4));
    expect(deriveSeed(1, '1')).not.toBe(deriveSeed(1, 1));
  });
});

describe('deriveSamplingSeed', () => {
  it('is the derived seed, kept below 2^31 - 1', () => {
    const seeds = Array.from({ length: 2000 }, (_, index) => deriveSamplingSeed(7, 'sample', index));
    expect(seeds.every((seed) => Number.isInteger(seed) && seed >= 0 && seed < 2_147_483_647)).toBe(true);
    expect(seeds.some((seed, index) => seed !== deriveSeed(7, 'sample', index))).toBe(true);
    expect(seeds.every((seed, index) => seed === deriveSeed(7, 'sample', index) % 2_147_483_647)).toBe(true);
  });
});
