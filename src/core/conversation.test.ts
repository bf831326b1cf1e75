import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import {
  conversationRootOf,
  inferTurnType,
  isTruthyFlag,
  nextStateAfter,
  openClawSessionHint,
  parseTurnType,
  quotedReplyIndex,
  quotedReplyKeys,
  replyKeyOf,
} from './conversation.js';

const internalContext: ChatMessage = {
  role: 'user',
  content: '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nworkspace files...\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>',
};

describe('conversation', () => {
  it('keys a reply to its conversation root so equal replies in different conversations differ', () => {
    const reply: ChatMessage = { role: 'assistant', content: 'Hello!' };
    const first = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }]);
    const second = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hey' }]);
    expect(replyKeyOf(first, reply)).not.toBe(replyKeyOf(second, reply));
    expect(replyKeyOf(first, reply)).toBe(replyKeyOf(first, { role: 'assistant', content: 'Hello!\n' }));
  });

  it('finds a reply OpenClaw sends back without its internal-context markers', () => {
    const root = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }]);
    const sent = 'You said: <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>';
    const replayed = 'You said: <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone';
    expect(replyKeyOf(root, { role: 'assistant', content: replayed })).toBe(replyKeyOf(root, { role: 'assistant', content: sent }));
    expect(replyKeyOf(root, { role: 'assistant', content: 'You said: none, really' })).not.toBe(replyKeyOf(root, { role: 'assistant', content: sent }));
  });

  it('keeps the root stable when OpenClaw drops its internal context block between turns', () => {
    const turnOne: ChatMessage[] = [{ role: 'system', content: 'S' }, { role: 'user', content: 'what is 2+2?' }, internalContext];
    const turnTwo: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'what is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'Thanks. And 4 plus 4?' },
      { ...internalContext, content: `${internalContext.content} v2` },
    ];
    const root = conversationRootOf(turnOne);
    expect(conversationRootOf(turnTwo)).toBe(root);
    const [quoted] = quotedReplyKeys(turnTwo, root);
    expect(quoted).toEqual({ index: 2, key: replyKeyOf(root, { role: 'assistant', content: '4' }) });
    expect(nextStateAfter(turnTwo, 2)).toEqual([{ role: 'user', content: 'Thanks. And 4 plus 4?' }]);
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

  it('reads the OpenClaw runtime session hint', () => {
    expect(openClawSessionHint([{ role: 'user', content: '[Mon] hi\nRuntime: agent=main session=x sessionId=abc-123 model=m' }])).toBe('abc-123');
    expect(openClawSessionHint([{ role: 'user', content: 'my sessionId=abc is here' }])).toBeNull();
  });

  it('marks heartbeat, memory-flush and cron traffic as side turns and the rest as main', () => {
    expect(inferTurnType([{ role: 'user', content: 'Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: 'Pre-compaction memory flush. Store durable memories now.' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: '[cron:daily-report] Summarize the inbox' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: 'Summarize the inbox' }, internalContext])).toBe('main');
    expect(inferTurnType([{ role: 'user', content: 'HEARTBEAT_OK?' }, { role: 'assistant', content: '' }, { role: 'tool', content: 'x', toolCallId: 'a' }])).toBe('main');
  });

  it('parses flags and turn types leniently and rejects unknown values', () => {
    expect(isTruthyFlag(' Yes ')).toBe(true);
    expect(isTruthyFlag('0')).toBe(false);
    expect(isTruthyFlag(undefined)).toBe(false);
    expect(parseTurnType('SIDE')).toBe('side');
    expect(parseTurnType('other')).toBeNull();
  });
});
