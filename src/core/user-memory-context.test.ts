import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import { memoryBlockOf, memoryMarker, withUserMemory } from './user-memory-context.js';

const entries = [{ text: 'Answer in one line.' }, { text: 'Greet the user warmly.' }, { text: 'No markdown.' }];

describe('memoryBlockOf', () => {
  it('lists the entries oldest first, one a line', () => {
    expect(memoryBlockOf(entries, 400)).toBe('- Answer in one line.\n- Greet the user warmly.\n- No markdown.');
    expect(memoryBlockOf([], 400)).toBeNull();
  });

  it('keeps the newest entries that fit the token bound', () => {
    const block = memoryBlockOf(entries, 30) as string;
    expect(block.endsWith('- No markdown.')).toBe(true);
    expect(block).not.toContain('Answer in one line');
    expect(memoryBlockOf(entries, 1)).toBeNull();
  });
});

describe('withUserMemory', () => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'You are a tutor.' },
    { role: 'user', content: 'What is 2+2?' },
  ];

  it('puts the block at the end of the first system message, leaving the rest and the input as they were', () => {
    const served = withUserMemory(conversation, '- Be brief.');
    expect(served).toEqual([{ role: 'system', content: `You are a tutor.\n\n${memoryMarker}\n- Be brief.` }, conversation[1]]);
    expect(conversation[0]?.content).toBe('You are a tutor.');
  });

  it('adds a system message when there is none, and removes it again with a null block', () => {
    const served = withUserMemory([conversation[1] as ChatMessage], '- Be brief.');
    expect(served).toEqual([{ role: 'system', content: `${memoryMarker}\n- Be brief.` }, conversation[1]]);
    expect(withUserMemory(served, null)).toEqual([conversation[1]]);
  });

  it('replaces a block already there, so applying it twice is applying it once', () => {
    const once = withUserMemory(conversation, '- Be brief.');
    expect(withUserMemory(once, '- Be brief.')).toEqual(once);
    expect(withUserMemory(once, '- Be warm.')).toEqual(withUserMemory(conversation, '- Be warm.'));
    expect(withUserMemory(once, null)).toEqual(conversation);
  });

  it('changes nothing without a block', () => {
    expect(withUserMemory(conversation, null)).toEqual(conversation);
  });
});
