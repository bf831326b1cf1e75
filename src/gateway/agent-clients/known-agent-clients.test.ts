import { describe, expect, it } from 'vitest';
import { conversationRootOf, nextStateAfter, quotedReplyKeys, replyKeyOf } from '../../core/conversation.js';
import type { ChatMessage } from '../../spec/chat.js';
import { agentConversationRules as rules, agentSessionHint, inferTurnType } from './known-agent-clients.js';

const internalContext: ChatMessage = {
  role: 'user',
  content: '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nworkspace files...\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>',
};

describe('OpenClaw', () => {
  it('keeps the root stable when it drops its internal context block between turns, and leaves the block out of the next state', () => {
    const turnOne: ChatMessage[] = [{ role: 'system', content: 'S' }, { role: 'user', content: 'what is 2+2?' }, internalContext];
    const turnTwo: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'what is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'Thanks. And 4 plus 4?' },
      { ...internalContext, content: `${internalContext.content} v2` },
    ];
    const root = conversationRootOf(turnOne, rules);
    expect(conversationRootOf(turnTwo, rules)).toBe(root);
    const [quoted] = quotedReplyKeys(turnTwo, root, Number.POSITIVE_INFINITY, rules);
    expect(quoted).toEqual({ index: 2, key: replyKeyOf(root, { role: 'assistant', content: '4' }, rules) });
    expect(nextStateAfter(turnTwo, 2, rules)).toEqual([{ role: 'user', content: 'Thanks. And 4 plus 4?' }]);
  });

  it('finds a reply it sends back without its internal-context markers', () => {
    const root = conversationRootOf([{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }], rules);
    const sent = 'You said: <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>';
    const replayed = 'You said: <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone';
    expect(replyKeyOf(root, { role: 'assistant', content: replayed }, rules)).toBe(replyKeyOf(root, { role: 'assistant', content: sent }, rules));
    expect(replyKeyOf(root, { role: 'assistant', content: 'You said: none, really' }, rules)).not.toBe(replyKeyOf(root, { role: 'assistant', content: sent }, rules));
  });

  it('reads the runtime session hint', () => {
    expect(agentSessionHint([{ role: 'user', content: '[Mon] hi\nRuntime: agent=main session=x sessionId=abc-123 model=m' }])).toBe('openclaw-abc-123');
    expect(agentSessionHint([{ role: 'user', content: 'my sessionId=abc is here' }])).toBeNull();
  });

  it('marks heartbeat, memory-flush, cron and compaction traffic as side turns and the rest as main', () => {
    expect(inferTurnType([{ role: 'user', content: 'Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: 'Pre-compaction memory flush. Store durable memories now.' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: '[cron:daily-report] Summarize the inbox' }])).toBe('side');
    expect(inferTurnType([{ role: 'user', content: 'Summarize the inbox' }, internalContext])).toBe('main');
    expect(inferTurnType([{ role: 'user', content: 'HEARTBEAT_OK?' }, { role: 'assistant', content: '' }, { role: 'tool', content: 'x', toolCallId: 'a' }])).toBe('main');
    // As OpenClaw 2026.9.6 compacted a long turn.
    const compaction: ChatMessage[] = [
      { role: 'system', content: 'You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary.' },
      { role: 'user', content: '<conversation>\n[User]: What is 2 + 3?\n</conversation>\n\nThis is the PREFIX of a turn that was too large to keep.' },
    ];
    expect(inferTurnType(compaction)).toBe('side');
  });
});

describe('Claude Code', () => {
  it('marks its session-title call as a side turn, and its main request as main', () => {
    const system = "x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=sdk-cli;\n\nYou are a Claude agent, built on Anthropic's Claude Agent SDK.\n\n";
    const title: ChatMessage[] = [
      { role: 'system', content: `${system}Generate a concise, sentence-case title (3-7 words) that captures the main topic.` },
      { role: 'user', content: '<session>\nWhat is 7 + 3?\n</session>\n\nWrite the title in the language the user wrote in.' },
    ];
    expect(inferTurnType(title)).toBe('side');
    expect(inferTurnType([{ role: 'system', content: `${system}You are an interactive agent that helps users with software engineering tasks.` }, { role: 'user', content: 'What is 7 + 3?' }])).toBe('main');
  });
});
