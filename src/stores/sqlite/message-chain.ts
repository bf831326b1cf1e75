/**
 * Content-addressed storage of message lists as chains of nodes. A request's messages are a path
 * from a root node to a tip; successive requests of a session share their prefix path, so each
 * distinct message in a given position is stored once however many turns repeat it. Tool lists,
 * which agents resend unchanged with every request, are stored once per distinct list.
 *
 * Every request of a session resends its whole prefix (an agent's ~40 KB system prompt first), so
 * the chain remembers which node each (parent, body) is: a known message costs a map lookup instead
 * of a SHA-256, a query and reading the body back. Only committed nodes are remembered (the caller
 * hands `learned` to `remember` after its commit), and nodes are never deleted, so a remembered id
 * stays right. Bounded by the characters it holds; least recently used entries go first.
 *
 * Serializing a 40 KB system prompt canonically costs more than everything else in finding it, so
 * a message of only a role and a text (system prompts, user turns: most of an agent's prefix) is
 * also remembered under those two strings, and tool lists under their plain JSON; both name
 * exactly one canonical body, so they find the same node without serializing it.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { canonicalJson } from '../../core/canonical-json.js';

/** A node the chain met while storing; remembered once the caller's transaction committed. */
export interface KnownNode {
  key: string;
  id: number;
}

export interface MessageChain {
  /** Stores the list (inside the caller's transaction); its tip node id is null when empty. */
  store(messages: readonly ChatMessage[]): { tipId: number | null; learned: KnownNode[] };
  load(tipId: number | null): ChatMessage[];
  storeTools(tools: readonly ToolDefinition[]): { id: number; learned: KnownNode[] };
  loadTools(toolSetId: number): ToolDefinition[];
  /** Call only after the transaction that stored these nodes has committed. */
  remember(learned: readonly KnownNode[]): void;
}

/** Characters of message and tool bodies remembered: 8 Mi (~16 MiB). */
const knownBudget = 8 * 1024 * 1024;

interface NodeRow {
  id: number;
  body: string;
}

function hashOf(body: string): Buffer {
  return createHash('sha256').update(body).digest();
}

/** The serialization-free key of a role-and-text message, or null for any other message. */
function quickKeyOf(parentId: number | null, message: ChatMessage): string | null {
  for (const field in message) {
    if (field !== 'role' && field !== 'content' && (message as unknown as Record<string, unknown>)[field] !== undefined) return null;
  }
  if (typeof message.content !== 'string') return null;
  return `q${parentId ?? ''}:${message.role}\u0001${message.content}`;
}

export function createMessageChain(database: Database.Database): MessageChain {
  const findChild = database.prepare<[number, Buffer], NodeRow>(
    'SELECT id, body FROM message_nodes WHERE parent_id = ? AND hash = ?',
  );
  const findRoot = database.prepare<[Buffer], NodeRow>(
    'SELECT id, body FROM message_nodes WHERE parent_id IS NULL AND hash = ?',
  );
  const insertNode = database.prepare<[number | null, Buffer, string]>(
    'INSERT INTO message_nodes (parent_id, hash, body) VALUES (?, ?, ?)',
  );
  const loadPath = database.prepare<[number], { body: string }>(`
    WITH RECURSIVE path (id, parent_id, body, depth) AS (
      SELECT id, parent_id, body, 0 FROM message_nodes WHERE id = ?
      UNION ALL
      SELECT node.id, node.parent_id, node.body, path.depth + 1
      FROM message_nodes AS node JOIN path ON node.id = path.parent_id
    )
    SELECT body FROM path ORDER BY depth DESC
  `);
  const findToolSet = database.prepare<[Buffer], NodeRow>('SELECT id, body FROM tool_sets WHERE hash = ?');
  const insertToolSet = database.prepare<[Buffer, string]>('INSERT INTO tool_sets (hash, body) VALUES (?, ?)');
  const loadToolSet = database.prepare<[number], { body: string }>('SELECT body FROM tool_sets WHERE id = ?');

  const known = new Map<string, number>();
  let knownCharacters = 0;
  const recall = (key: string): number | undefined => {
    const id = known.get(key);
    if (id !== undefined) {
      known.delete(key);
      known.set(key, id);
    }
    return id;
  };

  // A hash match with a different body would silently splice another conversation into this one.
  function checkBody(row: NodeRow, body: string): number {
    if (row.body !== body) {
      throw new ClawrlError('store_error', `hash collision on stored node ${row.id}`);
    }
    return row.id;
  }

  return {
    store(messages) {
      let parentId: number | null = null;
      const learned: KnownNode[] = [];
      for (const message of messages) {
        const quickKey = quickKeyOf(parentId, message);
        let id = quickKey === null ? undefined : recall(quickKey);
        if (id === undefined) {
          const body = canonicalJson(message);
          const key = `m${parentId ?? ''}:${body}`;
          id = recall(key);
          if (id === undefined) {
            const hash = hashOf(body);
            const existing: NodeRow | undefined = parentId === null ? findRoot.get(hash) : findChild.get(parentId, hash);
            id = existing === undefined ? Number(insertNode.run(parentId, hash, body).lastInsertRowid) : checkBody(existing, body);
            learned.push({ key, id });
          }
          if (quickKey !== null) learned.push({ key: quickKey, id });
        }
        parentId = id;
      }
      return { tipId: parentId, learned };
    },

    load(tipId) {
      if (tipId === null) return [];
      return loadPath.all(tipId).map((row) => JSON.parse(row.body) as ChatMessage);
    },

    storeTools(tools) {
      const quickKey = `u:${JSON.stringify(tools)}`;
      const quick = recall(quickKey);
      if (quick !== undefined) return { id: quick, learned: [] };
      const body = canonicalJson(tools);
      const key = `t:${body}`;
      const cached = recall(key);
      if (cached !== undefined) return { id: cached, learned: [{ key: quickKey, id: cached }] };
      const hash = hashOf(body);
      const existing = findToolSet.get(hash);
      const id = existing === undefined ? Number(insertToolSet.run(hash, body).lastInsertRowid) : checkBody(existing, body);
      return { id, learned: [{ key, id }, { key: quickKey, id }] };
    },

    remember(learned) {
      for (const { key, id } of learned) {
        if (key.length > knownBudget) continue;
        if (!known.has(key)) knownCharacters += key.length;
        known.delete(key);
        known.set(key, id);
      }
      while (knownCharacters > knownBudget) {
        const oldest = known.keys().next();
        if (oldest.done === true) break;
        known.delete(oldest.value);
        knownCharacters -= oldest.value.length;
      }
    },

    loadTools(toolSetId) {
      const row = loadToolSet.get(toolSetId);
      if (row === undefined) throw new ClawrlError('store_error', `missing tool set ${toolSetId}`);
      return JSON.parse(row.body) as ToolDefinition[];
    },
  };
}
