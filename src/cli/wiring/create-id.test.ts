import { describe, expect, it } from 'vitest';
import { createId } from './start-gateway-service.js';

describe('createId', () => {
  it('gives prefix, time and 16 random hex digits, never the same randomness twice', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1500 }, () => createId('turn'));
    const after = Date.now();
    const randomParts = new Set<string>();
    for (const id of ids) {
      const match = /^turn_([0-9a-z]+)([0-9a-f]{16})$/.exec(id);
      expect(match).not.toBeNull();
      const time = parseInt(match![1]!, 36);
      expect(time).toBeGreaterThanOrEqual(before);
      expect(time).toBeLessThanOrEqual(after);
      randomParts.add(match![2]!);
    }
    expect(randomParts.size).toBe(ids.length);
  });
});
