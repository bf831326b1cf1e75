import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import {
  conversationRootOf,
  isTruthyFlag,
  nextStateAfter,
  parseTurnType,
  quotedReplyIndex,
  quotedReplyKeys,
  replyKeyOf,
  type ConversationRules,
} from './conversation.js';

/** A client that adds `[env]` messages and strips `[tag]` from replies it sends back. */
const rules: ConversationRules = {
  isEnvironmentNoise: (message) => message.role === 'user' && message.content.startsWith('[env]'),
  replyText: (content) => content.replaceAll('[tag]', ''),
};

describe('conversation', () => {
  it('keys a reply to its conversation root so equal replies in different conversations differ', () => {
    const reply: ChatMessage = { role: 'assistant', content: 'Hello!' };
    const first = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }]);
    const second = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hey' }]);
    expect(replyKeyOf(first, reply)).not.toBe(replyKeyOf(second, reply));
    expect(replyKeyOf(first, reply)).toBe(replyKeyOf(first, { role: 'assistant', content: 'Hello!\n' }));
  });

  it("applies a client's rules: its noise is no part of the root nor of a next state, and a reply it strips is found again", () => {
    const turnOne: ChatMessage[] = [{ role: 'system', content: 'S' }, { role: 'user', content: 'what is 2+2?' }, { role: 'user', content: '[env] one' }];
    const turnTwo: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'what is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'Thanks. And 4 plus 4?' },
      { role: 'user', content: '[env] two' },
    ];
    const root = conversationRootOf(turnOne, rules);
    expect(conversationRootOf(turnTwo, rules)).toBe(root);
    expect(conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: '[env] one' }, { role: 'user', content: 'what is 2+2?' }])).not.toBe(root);
    expect(quotedReplyKeys(turnTwo, root, 1, rules)).toEqual([{ index: 2, key: replyKeyOf(root, { role: 'assistant', content: '4' }, rules) }]);
    expect(nextStateAfter(turnTwo, 2, rules)).toEqual([{ role: 'user', content: 'Thanks. And 4 plus 4?' }]);
    expect(nextStateAfter(turnTwo, 2)).toHaveLength(2);
    const sent = replyKeyOf(root, { role: 'assistant', content: '4 [tag]' }, rules);
    expect(quotedReplyIndex(turnTwo, root, sent, rules)).toBe(2);
    expect(replyKeyOf(root, { role: 'assistant', content: '4 [tag]' })).not.toBe(replyKeyOf(root, { role: 'assistant', content: '4' }));
  });

  it('matches tool-call replies whatever the JSON formatting the client sends back', () => {
    const root = conversationRootOf([{ role: 'user', content: 'weather?' }]);
    const served: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'get', arguments: '{"city":"Paris"}' }] };
    const quoted: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'get', arguments: '{ "city": "Paris" }' }] };
    expect(replyKeyOf(root, quoted)).toBe(replyKeyOf(root, served));
    expect(replyKeyOf(root, { ...served, toolCalls: [{ id: 'a', name: 'get', arguments: '{"city":"Rome"}' }] })).not.toBe(
      replyKeyOf(root, served),
    );
  });

  it('limits how many quoted replies are keyed, newest first', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '1' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: '2' },
      { role: 'user', content: 'c' },
    ];
    const keys = quotedReplyKeys(messages, conversationRootOf(messages), 1);
    expect(keys.map((key) => key.index)).toEqual([3]);
  });

  it('finds where a request quotes a given reply, newest first, or -1', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '1' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: '1' },
      { role: 'user', content: 'c' },
    ];
    const root = conversationRootOf(messages);
    expect(quotedReplyIndex(messages, root, replyKeyOf(root, { role: 'assistant', content: '1' }))).toBe(4);
    expect(quotedReplyIndex(messages, root, replyKeyOf(root, { role: 'assistant', content: '2' }))).toBe(-1);
  });

  it('gives the same root for a system prompt it has seen before and one it has not', () => {
    const prompt = 'You are an agent. '.repeat(3000);
    const messages: ChatMessage[] = [{ role: 'system', content: prompt }, { role: 'user', content: 'hi' }];
    const first = conversationRootOf(messages);
    expect(conversationRootOf([{ role: 'system', content: `${prompt}` }, { role: 'user', content: 'hi' }])).toBe(first);
    expect(conversationRootOf([{ role: 'system', content: prompt }, { role: 'user', content: 'other' }])).not.toBe(first);
    for (let index = 0; index < 100; index += 1) conversationRootOf([{ role: 'system', content: `other ${index}` }]);
    expect(conversationRootOf(messages)).toBe(first);
  });

  it('parses flags and turn types leniently and rejects unknown values', () => {
    expect(isTruthyFlag(' Yes ')).toBe(true);
    expect(isTruthyFlag('0')).toBe(false);
    expect(isTruthyFlag(undefined)).toBe(false);
    expect(parseTurnType('SIDE')).toBe('side');
    expect(parseTurnType('other')).toBeNull();
  });
});
