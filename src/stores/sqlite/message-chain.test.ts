import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { createMessageChain } from './message-chain.js';
import { applySqliteMigrations } from './sqlite-migrations.js';

function openChain(budgetCharacters?: number) {
  const database = new Database(':memory:');
  applySqliteMigrations(database);
  return { database, chain: createMessageChain(database, budgetCharacters === undefined ? {} : { budgetCharacters }) };
}

describe('message chain', () => {
  const system: ChatMessage = { role: 'system', content: 'You are helpful. '.repeat(2000) };
  const turnOne: ChatMessage[] = [system, { role: 'user', content: 'hi' }];
  const turnTwo: ChatMessage[] = [
    ...turnOne,
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }] },
    { role: 'tool', content: 'file text', toolCallId: 'c1' },
    { role: 'user', content: 'thanks', name: undefined },
  ];

  it('finds remembered nodes again, whether by role and text or by canonical body, and loads them back exactly', () => {
    const { database, chain } = openChain();
    const first = chain.store(turnOne);
    chain.remember(first.learned);
    const second = chain.store(turnTwo.map((message) => ({ ...message })));
    chain.remember(second.learned);
    // The shared prefix was known: only the three new messages were learned (the plain ones twice).
    expect(second.learned.filter((node) => node.slot.startsWith('m')).length).toBe(3);
    const again = chain.store(turnTwo.map((message) => ({ ...message })));
    expect(again).toEqual({ tipId: second.tipId, learned: [] });
    expect(chain.load(second.tipId)).toEqual(turnTwo.map((message) => JSON.parse(JSON.stringify(message)) as ChatMessage));
    expect(database.prepare('SELECT COUNT(*) AS count FROM message_nodes').get()).toEqual({ count: 5 });
  });

  it('keys a message by its parent: the same text under another prefix is another node', () => {
    const { chain } = openChain();
    const stored = chain.store([{ role: 'user', content: 'a' }, { role: 'user', content: 'a' }]);
    chain.remember(stored.learned);
    const ids = new Set(stored.learned.map((node) => node.id));
    expect(ids.size).toBe(2);
    expect(chain.store([{ role: 'user', content: 'a' }]).tipId).toBe(stored.learned[0]?.id);
  });

  it('stores a tool list once, whatever the key order it arrives in', () => {
    const { chain } = openChain();
    const tools: ToolDefinition[] = [{ name: 'read', description: 'Reads', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];
    const first = chain.storeTools(tools);
    chain.remember(first.learned);
    expect(chain.storeTools(tools)).toEqual({ id: first.id, learned: [] });
    const reordered: ToolDefinition[] = [{ parameters: { properties: { path: { type: 'string' } }, type: 'object' }, description: 'Reads', name: 'read' }];
    const second = chain.storeTools(reordered);
    expect(second.id).toBe(first.id);
    chain.remember(second.learned);
    expect(chain.storeTools(reordered)).toEqual({ id: first.id, learned: [] });
    expect(chain.loadTools(first.id)).toEqual(tools);
  });

  it('finds a recently met tool list by value, and never takes another list, or an uncommitted one, for it', () => {
    const { database, chain } = openChain();
    const listOf = (description: string): ToolDefinition[] => [{ name: 'read', description, parameters: { type: 'object' } }];
    const first = chain.storeTools(listOf('Reads'));
    // Not remembered (as if its transaction rolled back): a fresh copy must not get its id.
    database.prepare('DELETE FROM tool_sets').run();
    const again = chain.storeTools(listOf('Reads'));
    chain.remember(again.learned);
    expect(again.learned.length).toBeGreaterThan(0);
    expect(chain.storeTools(listOf('Reads'))).toEqual({ id: again.id, learned: [] });
    // Now among the recent lists: found by value, with nothing to learn.
    expect(chain.storeTools(listOf('Reads'))).toEqual({ id: again.id, learned: [] });
    const other = chain.storeTools(listOf('Writes'));
    expect(other.id).not.toBe(again.id);
    expect(first.id).toBeGreaterThan(0);
    expect(chain.loadTools(other.id)).toEqual(listOf('Writes'));
  });

  it('stays within its budget: the least recently used texts are found in the database again', () => {
    const texts = ['a', 'b', 'c', 'd'].map((seed) => `${seed}${'x'.repeat(999)}`);
    // A message is remembered twice (by its text and by its canonical body, ~2,040 characters in
    // all): room for three; over budget, the chain keeps three quarters of it.
    const { chain } = openChain(6_200);
    const store = (text: string) => {
      const stored = chain.store([{ role: 'user', content: text }]);
      chain.remember(stored.learned);
      return stored;
    };
    const ids = texts.slice(0, 3).map((text) => store(text).tipId);
    store(texts[0] as string);
    store(texts[3] as string);
    // 'a' was used again after 'b' and 'c', so 'b' and 'c' were dropped and 'a' was not.
    expect(store(texts[0] as string).learned).toEqual([]);
    const again = store(texts[1] as string);
    expect(again.learned.length).toBeGreaterThan(0);
    expect(again.tipId).toBe(ids[1]);
  });

  it('never takes a long text for a short one under a slot, even when the long one spells their key', () => {
    const { chain } = openChain();
    const short = 'x'.repeat(16_380);
    // A long text equal to the short text's slot-and-text key, under the same slot.
    const long = `q:user\u0000${short}`;
    const first = chain.store([{ role: 'user', content: long }]);
    chain.remember(first.learned);
    const second = chain.store([{ role: 'user', content: short }]);
    expect(second.tipId).not.toBe(first.tipId);
    expect(chain.load(second.tipId)).toEqual([{ role: 'user', content: short }]);
  });
});
