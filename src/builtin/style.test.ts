import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../core/seeded-random.js';
import {
  classifyAnswerFormat,
  classifyFormatting,
  classifyLength,
  classifyStyle,
  classifyTone,
  countWords,
  drawStyle,
  styleMismatches,
} from './style.js';

const words = (count: number): string => Array.from({ length: count }, () => 'word').join(' ');

describe('classifyFormatting', () => {
  it('finds bold, numbered lines and plain text', () => {
    expect(classifyFormatting('So the total is **17** apples.')).toBe('bold');
    expect(classifyFormatting('Steps:\n1. Add 12 and 5.\n2. Get 17.')).toBe('numbered');
    expect(classifyFormatting('  3) indented item')).toBe('numbered');
    expect(classifyFormatting('Mia has 17 apples. 12 + 5 = 17.')).toBe('plain');
  });

  it('does not take stray asterisks, numbers mid-line or bold across lines for formatting', () => {
    expect(classifyFormatting('2 * 3 = 6 and 4 * 5 = 20')).toBe('plain');
    expect(classifyFormatting('**start\nend**')).toBe('plain');
    expect(classifyFormatting('She bought 3. Then 4 more.')).toBe('plain');
    expect(classifyFormatting('17.5 is the answer')).toBe('plain');
  });

  it('prefers bold when both bold and a numbered list are present', () => {
    expect(classifyFormatting('1. Add **12** and 5.')).toBe('bold');
  });
});

describe('classifyLength', () => {
  it('uses the 40 and 100 word limits', () => {
    expect(countWords('  a  b\n\tc ')).toBe(3);
    expect(countWords('')).toBe(0);
    expect(classifyLength(words(39))).toBe('short');
    expect(classifyLength(words(40))).toBe('medium');
    expect(classifyLength(words(100))).toBe('medium');
    expect(classifyLength(words(101))).toBe('long');
  });
});

describe('classifyTone', () => {
  it('is warm only with a listed phrase, case-insensitive', () => {
    expect(classifyTone('Well done! You got it.')).toBe('warm');
    expect(classifyTone('That was a WONDERFUL try.')).toBe('warm');
    expect(classifyTone('A great result. Well done.')).toBe('neutral');
    expect(classifyTone('The answer is 17.')).toBe('neutral');
  });
});

describe('classifyAnswerFormat', () => {
  it('reads boxed, answer lines and sentences', () => {
    expect(classifyAnswerFormat('So the answer is \\boxed{17}.')).toBe('boxed');
    expect(classifyAnswerFormat('Work.\nAnswer: 17')).toBe('line');
    expect(classifyAnswerFormat('Work.\n**Answer:** 1,250.')).toBe('line');
    expect(classifyAnswerFormat('Work.\nanswer: -3')).toBe('line');
    expect(classifyAnswerFormat('The answer: 17 apples in total.')).toBe('sentence');
    expect(classifyAnswerFormat('Mia has 17 apples now.')).toBe('sentence');
  });
});

describe('classifyStyle and styleMismatches', () => {
  it('classifies all four dimensions and lists only mismatched requested ones', () => {
    const text = 'Excellent! Mia has 12 and gets 5.\n1. 12 + 5 = 17.\n2. Done.\nAnswer: 17';
    expect(classifyStyle(text)).toEqual({
      formatting: 'numbered',
      length: 'short',
      tone: 'warm',
      answerFormat: 'line',
    });
    expect(styleMismatches(text, { formatting: 'numbered', tone: 'warm' })).toEqual([]);
    expect(styleMismatches(text, { formatting: 'plain', length: 'long', answerFormat: 'line' })).toEqual([
      'formatting',
      'length',
    ]);
  });
});

describe('drawStyle', () => {
  it('keeps fixed values and draws the rest', () => {
    const random = createSeededRandom(3);
    const seenFormatting = new Set<string>();
    for (let index = 0; index < 200; index += 1) {
      const style = drawStyle(random, { tone: 'warm' });
      expect(style.tone).toBe('warm');
      seenFormatting.add(style.formatting);
    }
    expect(seenFormatting.size).toBe(3);
  });
});
