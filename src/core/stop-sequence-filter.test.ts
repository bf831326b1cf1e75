import { describe, expect, it } from 'vitest';
import { StopSequenceFilter } from './stop-sequence-filter.js';

describe('StopSequenceFilter', () => {
  it('holds back a possible stop prefix and cuts before the stop string', () => {
    const filter = new StopSequenceFilter(['</s>', 'END']);
    expect(filter.push('hello <')).toBe('hell');
    expect(filter.push('/')).toBe('o');
    expect(filter.push('x> and EN')).toBe(' </x> and');
    expect(filter.push('D more')).toBe(' ');
    expect(filter.hasStopped).toBe(true);
    expect(filter.push('later')).toBe('');
    expect(filter.finish()).toBe('');
  });

  it('passes text through without stops and releases the held tail at the end', () => {
    expect(new StopSequenceFilter([]).push('abc')).toBe('abc');
    const filter = new StopSequenceFilter(['xyz']);
    expect(filter.push('abcx')).toBe('ab');
    expect(filter.finish()).toBe('cx');
  });

  it('never splits a surrogate pair', () => {
    const filter = new StopSequenceFilter(['ab']);
    expect(filter.push('x😀')).toBe('x');
    expect(filter.push('y')).toBe('😀');
  });
});
