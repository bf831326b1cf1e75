import { describe, expect, it } from 'vitest';
import { memoryEntryTextOf, normalizeMemoryText, tenantOfUser } from './user-memory-text.js';

describe('memoryEntryTextOf', () => {
  it('collapses whitespace, keeps short text whole and drops blank text', () => {
    expect(memoryEntryTextOf('  Be   warmer,\n please. ')).toBe('Be warmer, please.');
    expect(memoryEntryTextOf(' \n\t ')).toBeNull();
  });

  it('cuts long text at a word boundary with an ellipsis, within the limit', () => {
    const text = 'word '.repeat(100);
    const kept = memoryEntryTextOf(text, 40) as string;
    expect(kept.length).toBeLessThanOrEqual(40);
    expect(kept.endsWith('word…')).toBe(true);
    expect(memoryEntryTextOf('x'.repeat(50), 40)).toBe(`${'x'.repeat(39)}…`);
  });
});

describe('normalizeMemoryText', () => {
  it('makes entries that differ in case, spacing and closing punctuation the same', () => {
    expect(normalizeMemoryText('Be warmer.')).toBe(normalizeMemoryText('  be   WARMER!! '));
    expect(normalizeMemoryText('Use ﬁve words')).toBe('use five words');
    expect(normalizeMemoryText('Be warmer')).not.toBe(normalizeMemoryText('Be colder'));
  });
});

describe('tenantOfUser', () => {
  it('is the part before the slash, or the user itself', () => {
    expect(tenantOfUser('team/alice')).toBe('team');
    expect(tenantOfUser('team')).toBe('team');
  });
});
