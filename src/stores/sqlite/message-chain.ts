/**
 * Content-addressed storage of message lists as chains of nodes. A request's messages are a path
 * from a root node to a tip; successive requests of a session share their prefix path, so each
 * distinct message in a given position is stored once however many turns repeat it. Tool lists,
 * which agents resend unchanged with every request, are stored once per distinct list.
 *
 * Every request of a session resends its whole prefix (an agent's ~40 KB system prompt first), so
 * the chain remembers which node each (parent, body) is: a known message costs a map lookup instead
 * of a SHA-256, a query and reading the body back. The lookup is keyed by the text itself, not by a
 * longer string built around it, so finding the system prompt copies nothing. Only committed nodes
 * are remembered (the caller hands `learned` to `remember` after its commit), and only an erasure
 * deletes nodes, which then calls `forget`, so a remembered id stays right. Bounded by the characters it holds; least recently used
 * texts go first.
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
import { canonicalJson } from '../canonical-json.js';
import { isSameJson } from '../same-json.js';
import { isHashedByLength } from '../../core/string-interner.js';

/**
 * A node the chain met while storing; remembered once the caller's transaction committed. Keyed by
 * a text (a message's content or canonical body, a tool list's JSON) and a short slot saying what
 * the text is and under which parent, so a 40 KB system prompt is looked up as the string the
 * request parsed, never copied into a longer key.
 */
export interface KnownNode {
  text: string;
  slot: string;
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
  /** Forgets every remembered node: after an erasure deleted nodes, a remembered id may name none. */
  forget(): void;
}

/** Tool lists compared by value before serializing one (each comparison that fails ends early). */
const recentToolLists = 4;

/** Characters of message and tool bodies remembered by default: 8 Mi (~16 MiB). */
const defaultKnownBudget = 8 * 1024 * 1024;

interface NodeRow {
  id: number;
  body: string;
}

/**
 * A remembered node, or for a long text all its nodes by slot. Short texts are keyed by slot and
 * text together, since V8 hashes their contents anyway; long ones by the text alone.
 */
interface KnownEntry {
  id: number;
  slots: Map<string, number> | undefined;
  /** When it was last used. */
  used: number;
  characters: number;
}

function hashOf(body: string): Buffer {
  return createHash('sha256').update(body).digest();
}

/** True for a message of only a role and a text, which its content and role name exactly. */
function isPlainText(message: ChatMessage): boolean {
  for (const field in message) {
    if (field !== 'role' && field !== 'content' && (message as unknown as Record<string, unknown>)[field] !== undefined) return false;
  }
  return typeof message.content === 'string';
}

export function createMessageChain(database: Database.Database, options: { budgetCharacters?: number } = {}): MessageChain {
  const knownBudget = options.budgetCharacters ?? defaultKnownBudget;
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

  // Map keys of more than 16,383 characters are hashed by their length (`isHashedByLength`), so a
  // long text is its own key: finding it costs one comparison with the remembered string, and
  // building a longer key around it would copy it. A short text is hashed from its contents
  // whatever the key, so slot and text make one key: common short texts ("ok") recur under
  // thousands of parents. The two kinds live in separate maps, so no text can pose as another's
  // slot-and-text key.
  const knownLong = new Map<string, KnownEntry>();
  const knownShort = new Map<string, KnownEntry>();
  let knownCharacters = 0;
  let clock = 0;
  // The last few committed tool lists as the requests gave them: an agent resends its list
  // unchanged, and comparing it member by member (`isSameJson`) costs less than serializing it
  // to look it up (on an agent turn's critical path, since the turn is recorded after the reply).
  const recentTools: { tools: readonly ToolDefinition[]; id: number }[] = [];
  const recall = (text: string, slot: string): number | undefined => {
    const entry = isHashedByLength(text) ? knownLong.get(text) : knownShort.get(`${slot}\u0000${text}`);
    if (entry === undefined) return undefined;
    const id = entry.slots === undefined ? entry.id : entry.slots.get(slot);
    if (id !== undefined) entry.used = ++clock;
    return id;
  };
  /** Drops the least recently used texts down to three quarters of the budget, so it runs rarely. */
  function evict(): void {
    const byAge = [...knownLong, ...knownShort].sort((a, b) => a[1].used - b[1].used);
    for (const [key, entry] of byAge) {
      if (knownCharacters <= (knownBudget * 3) / 4) break;
      if (entry.slots === undefined) knownShort.delete(key);
      else knownLong.delete(key);
      knownCharacters -= entry.characters;
    }
  }

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
        const plainSlot: string | null = isPlainText(message) ? `q${parentId ?? ''}:${message.role}` : null;
        let id: number | undefined = plainSlot === null ? undefined : recall(message.content as string, plainSlot);
        if (id === undefined) {
          const body = canonicalJson(message);
          const slot = `m${parentId ?? ''}`;
          id = recall(body, slot);
          if (id === undefined) {
            const hash = hashOf(body);
            const existing: NodeRow | undefined = parentId === null ? findRoot.get(hash) : findChild.get(parentId, hash);
            id = existing === undefined ? Number(insertNode.run(parentId, hash, body).lastInsertRowid) : checkBody(existing, body);
            learned.push({ text: body, slot, id });
          }
          if (plainSlot !== null) learned.push({ text: message.content as string, slot: plainSlot, id });
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
      for (const recent of recentTools) if (isSameJson(recent.tools, tools)) return { id: recent.id, learned: [] };
      const plain = JSON.stringify(tools);
      const quick = recall(plain, 'u');
      if (quick !== undefined) {
        // Remembered, so committed: safe to hand out again without asking `recall`.
        recentTools.unshift({ tools, id: quick });
        recentTools.length = Math.min(recentTools.length, recentToolLists);
        return { id: quick, learned: [] };
      }
      const body = canonicalJson(tools);
      const cached = recall(body, 't');
      if (cached !== undefined) return { id: cached, learned: [{ text: plain, slot: 'u', id: cached }] };
      const hash = hashOf(body);
      const existing = findToolSet.get(hash);
      const id = existing === undefined ? Number(insertToolSet.run(hash, body).lastInsertRowid) : checkBody(existing, body);
      return { id, learned: [{ text: body, slot: 't', id }, { text: plain, slot: 'u', id }] };
    },

    remember(learned) {
      for (const { text, slot, id } of learned) {
        const cost = text.length + slot.length;
        if (cost > knownBudget) continue;
        const long = isHashedByLength(text);
        const key = long ? text : `${slot}\u0000${text}`;
        const known = long ? knownLong : knownShort;
        const entry = known.get(key);
        if (entry === undefined) {
          known.set(key, { id, slots: long ? new Map([[slot, id]]) : undefined, used: ++clock, characters: cost });
          knownCharacters += cost;
          continue;
        }
        entry.used = ++clock;
        if (entry.slots === undefined) {
          entry.id = id;
        } else if (!entry.slots.has(slot)) {
          entry.slots.set(slot, id);
          entry.characters += slot.length;
          knownCharacters += slot.length;
        }
      }
      if (knownCharacters > knownBudget) evict();
    },

    forget() {
      knownLong.clear();
      knownShort.clear();
      knownCharacters = 0;
      recentTools.length = 0;
    },

    loadTools(toolSetId) {
      const row = loadToolSet.get(toolSetId);
      if (row === undefined) throw new ClawrlError('store_error', `missing tool set ${toolSetId}`);
      return JSON.parse(row.body) as ToolDefinition[];
    },
  };
}
