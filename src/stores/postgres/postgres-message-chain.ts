/**
 * Content-addressed message lists in Postgres: the same node tree as the SQLite store (a request's
 * messages are a path from a root to a tip, unique on (parent, SHA-256 of the canonical JSON)), so
 * a session's shared prefix is stored once. Finding how much of a list is stored already takes one
 * round trip whatever its length; only the new messages are sent.
 *
 * Several processes may store the same node at once: inserts skip conflicts and read the winner.
 * Stored prefixes are matched by SHA-256 alone: comparing bodies would send every message of the
 * list (an agent's 40 KB system prompt) with every turn, the cost this scheme exists to avoid.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Queryable } from './postgres-database.js';

function hashOf(body: string): Buffer {
  return createHash('sha256').update(body).digest();
}

// The deepest stored node along the list's hashes, walked from the root in one statement.
const findStoredPrefix = `
  WITH RECURSIVE path (depth, id) AS (
    SELECT 1, id FROM message_nodes WHERE parent_id IS NULL AND hash = ($1::bytea[])[1]
    UNION ALL
    SELECT path.depth + 1, node.id
    FROM path JOIN message_nodes AS node ON node.parent_id = path.id AND node.hash = ($1::bytea[])[path.depth + 1]
  )
  SELECT depth, id FROM path ORDER BY depth DESC LIMIT 1
`;

const loadPath = `
  WITH RECURSIVE path (id, parent_id, body, depth) AS (
    SELECT id, parent_id, body, 0 FROM message_nodes WHERE id = $1
    UNION ALL
    SELECT node.id, node.parent_id, node.body, path.depth + 1
    FROM message_nodes AS node JOIN path ON node.id = path.parent_id
  )
  SELECT body FROM path ORDER BY depth DESC
`;

async function insertNode(client: Queryable, parentId: number | null, hash: Buffer, body: string): Promise<number> {
  const inserted = await client.query<{ id: number }>(
    'INSERT INTO message_nodes (parent_id, hash, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id',
    [parentId, hash, body],
  );
  const id = inserted.rows[0]?.id;
  if (id !== undefined) return id;
  // Another transaction stored it first; a new statement sees its committed row.
  const existing = await client.query<{ id: number; body: string }>(
    parentId === null
      ? 'SELECT id, body FROM message_nodes WHERE parent_id IS NULL AND hash = $1'
      : 'SELECT id, body FROM message_nodes WHERE parent_id = $2 AND hash = $1',
    parentId === null ? [hash] : [hash, parentId],
  );
  const row = existing.rows[0];
  if (row === undefined) throw new ClawrlError('store_error', 'a message node vanished while it was being shared');
  if (row.body !== body) throw new ClawrlError('store_error', `hash collision on stored node ${row.id}`);
  return row.id;
}

/** Stores the list inside the caller's transaction and returns its tip node id; null when empty. */
export async function storeMessages(client: Queryable, messages: readonly ChatMessage[]): Promise<number | null> {
  if (messages.length === 0) return null;
  const bodies = messages.map((message) => canonicalJson(message));
  const hashes = bodies.map(hashOf);
  const stored = (await client.query<{ depth: number; id: number }>(findStoredPrefix, [hashes])).rows[0];
  let parentId = stored?.id ?? null;
  for (let position = stored?.depth ?? 0; position < messages.length; position += 1) {
    parentId = await insertNode(client, parentId, hashes[position] as Buffer, bodies[position] as string);
  }
  return parentId;
}

export async function loadMessages(client: Queryable, tipId: number | null): Promise<ChatMessage[]> {
  if (tipId === null) return [];
  const { rows } = await client.query<{ body: string }>(loadPath, [tipId]);
  return rows.map((row) => JSON.parse(row.body) as ChatMessage);
}

/** Stores each distinct tool list once; returns its id. */
export async function storeTools(client: Queryable, tools: readonly ToolDefinition[]): Promise<number> {
  const body = canonicalJson(tools);
  const hash = hashOf(body);
  const select = 'SELECT id FROM tool_sets WHERE hash = $1';
  // Agents resend the same list with every request, so it is nearly always stored already.
  const row =
    (await client.query<{ id: number }>(select, [hash])).rows[0] ??
    (
      await client.query<{ id: number }>(
        'INSERT INTO tool_sets (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING RETURNING id',
        [hash, body],
      )
    ).rows[0] ??
    (await client.query<{ id: number }>(select, [hash])).rows[0];
  if (row === undefined) throw new ClawrlError('store_error', 'a tool set vanished while it was being shared');
  return row.id;
}
