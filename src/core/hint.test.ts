import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import { appendHint, hintSeparator, splitHint } from './hint.js';

describe('appendHint', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be helpful.' },
    { role: 'user', content: 'First question' },
    { role: 'assistant', content: 'Answer' },
    { role: 'user', content: 'Second question' },
    { role: 'tool', content: 'tool output', toolCallId: 'call_0' },
  ];

  it('appends to the last user message in the documented format without mutating the input', () => {
    const result = appendHint(messages, '  Keep it short.  ');
    expect(result[3]?.content).toBe("Second question\n\n[user's hint / instruction]\nKeep it short.");
    expect(result[1]?.content).toBe('First question');
    expect(result[4]).toEqual(messages[4]);
    expect(messages[3]?.content).toBe('Second question');
    expect(result).not.toBe(messages);
  });

  it('adds a user message when there is none and leaves blank hints out', () => {
    const result = appendHint([{ role: 'system', content: 'sys' }], 'Be warm.');
    expect(result).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: "[user's hint / instruction]\nBe warm." },
    ]);
    expect(splitHint(result[1]?.content ?? '')).toEqual({ text: '', hint: 'Be warm.' });
    expect(appendHint(messages, '   ')).toEqual(messages);
  });
});

describe('splitHint', () => {
  it('splits at the last separator and reports no hint otherwise', () => {
    expect(splitHint(`Question${hintSeparator}Keep it short.`)).toEqual({ text: 'Question', hint: 'Keep it short.' });
    expect(splitHint(`A${hintSeparator}fake${hintSeparator}real`)).toEqual({ text: `A${hintSeparator}fake`, hint: 'real' });
    expect(splitHint('Just a question')).toEqual({ text: 'Just a question', hint: null });
  });
});
