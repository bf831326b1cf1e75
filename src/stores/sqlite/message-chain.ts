/**
 * Content-addressed storage of message lists as chains of nodes. A request's messages are a path
 * from a root node to a tip; successive requests of a session share their prefix path, so each
 * distinct message in a given position is stored once however many turns repeat it. Tool lists,
 * which agents resend unchanged with every request, are stored once per distinct list.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { canonicalJson } from '../../core/canonical-json.js';

export interface MessageChain {
  /** Stores the list (inside the caller's transaction) and returns its tip node id; null when empty. */
  store(messages: readonly ChatMessage[]): number | null;
  load(tipId: number | null): ChatMessage[];
  storeTools(tools: readonly ToolDefinition[]): number;
  loadTools(toolSetId: number): ToolDefinition[];
}

interface NodeRow {
  id: number;
  body: string;
}

function hashOf(body: string): Buffer {
  return createHash('sha256').update(body).digest();
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
      for (const message of messages) {
        const body = canonicalJson(message);
        const hash = hashOf(body);
        const existing: NodeRow | undefined = parentId === null ? findRoot.get(hash) : findChild.get(parentId, hash);
        parentId =
          existing === undefined
            ? Number(insertNode.run(parentId, hash, body).lastInsertRowid)
            : checkBody(existing, body);
      }
      return parentId;
    },

    load(tipId) {
      if (tipId === null) return [];
      return loadPath.all(tipId).map((row) => JSON.parse(row.body) as ChatMessage);
    },

    storeTools(tools) {
      const body = canonicalJson(tools);
      const hash = hashOf(body);
      const existing = findToolSet.get(hash);
      return existing === undefined ? Number(insertToolSet.run(hash, body).lastInsertRowid) : checkBody(existing, body);
    },

    loadTools(toolSetId) {
      const row = loadToolSet.get(toolSetId);
      if (row === undefined) throw new ClawrlError('store_error', `missing tool set ${toolSetId}`);
      return JSON.parse(row.body) as ToolDefinition[];
    },
  };
}
