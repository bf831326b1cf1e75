import { describe, expect, it } from 'vitest';
import { isSameJson } from './same-json.js';

describe('isSameJson', () => {
  const tools = () => JSON.parse('[{"type":"function","function":{"name":"read","description":"Reads a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]') as unknown;

  it('is true for separately parsed equal values', () => {
    expect(isSameJson(tools(), tools())).toBe(true);
    expect(isSameJson({ a: [1, 'x', null, true, { b: 0 }] }, { a: [1, 'x', null, true, { b: -0 }] })).toBe(true);
  });

  it('is true only when JSON.stringify gives the same text', () => {
    const cases: [unknown, unknown][] = [
      [tools(), JSON.parse(JSON.stringify(tools()).replace('Reads', 'Writes'))],
      [{ a: 1, b: 2 }, { b: 2, a: 1 }],
      [{ a: 1 }, { a: 1, b: 2 }],
      [[1, 2], [1, 2, 3]],
      [[1], { 0: 1 }],
      [{ a: undefined }, {}],
      [[undefined], [null]],
      ['1', 1],
      [null, {}],
      [{ a: new Date(0) }, { a: new Date(0) }],
    ];
    for (const [a, b] of cases) {
      const sameText = JSON.stringify(a) === JSON.stringify(b);
      if (isSameJson(a, b)) expect(sameText).toBe(true);
    }
    expect(cases.filter(([a, b]) => isSameJson(a, b))).toEqual([]);
  });
});
