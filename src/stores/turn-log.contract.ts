/**
 * The `TurnLog` contract (`spec/turn-log.ts`): sessions, turns that rebuild exactly from their
 * shared prefixes, next-state links and reply keys, read back through `RecordReads`.
 * `runRecordStoreContract` runs it, so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import type { RecordStore } from '../spec/record-store.js';
import type { NewTurn } from '../spec/records.js';
import { expectStoreError, newTurn as fixtureTurn } from './testing/record-fixtures.js';

/** A turn that asks what 2 + 3 is and answers 5. */
const newTurn = (overrides: Partial<NewTurn> & Pick<NewTurn, 'id' | 'sessionId'>): NewTurn =>
  fixtureTurn(overrides.id, { messages: [{ role: 'user', content: 'What is 2 + 3?' }], response: { role: 'assistant', content: '5' }, ...overrides });

export function runTurnLogContract(currentStore: () => RecordStore): void {
  describe('turn log', () => {
    let store: RecordStore;

    beforeEach(() => {
      store = currentStore();
    });

    async function openSession(id: string, at = 100, tenant: string | null = null) {
      await store.upsertSession({ id, tenant, user: tenant, at });
      return store.getSession(id);
    }

    describe('sessions', () => {
      it('creates an open session on first upsert and returns null for unknown ids', async () => {
        const created = await openSession('s1', 100, 'alice');
        const expected = {
          id: 's1',
          tenant: 'alice', user: 'alice',
          status: 'open',
          createdAt: 100,
          updatedAt: 100,
          closedAt: null,
          closeReason: null,
          turnIds: [],
          sideTurns: 0,
        };
        expect(created).toEqual(expected);
        expect(await store.getSession('s1')).toEqual(expected);
        expect(await store.getSession('missing')).toBeNull();
      });

      it('touches updatedAt of an open session and keeps its creation time and tenant', async () => {
        await openSession('s1', 100, 'alice');
        const touched = await openSession('s1', 250, 'bob');
        expect(touched).toMatchObject({ status: 'open', createdAt: 100, updatedAt: 250, tenant: 'alice', user: 'alice' });
        expect(await store.getSession('s1')).toEqual(touched);
        // A request that started earlier but touched later never moves the time back.
        expect(await openSession('s1', 200)).toEqual(touched);
      });

      it('re-opens a closed session', async () => {
        await openSession('s1', 100);
        await store.closeSession('s1', 'done', 150);
        const reopened = await openSession('s1', 200);
        expect(reopened).toMatchObject({ status: 'open', closedAt: null, closeReason: null, updatedAt: 200 });
      });

      it('closes an open session once; closing again or an unknown session is a no-op', async () => {
        await openSession('s1', 100);
        expect(await store.closeSession('s1', 'done', 150)).toBe(true);
        expect(await store.getSession('s1')).toMatchObject({ status: 'closed', closedAt: 150, closeReason: 'done' });
        expect(await store.closeSession('s1', 'admin', 175)).toBe(false);
        expect(await store.getSession('s1')).toMatchObject({ status: 'closed', closedAt: 150, closeReason: 'done' });
        expect(await store.closeSession('missing', 'done', 175)).toBe(false);
        expect(await store.getSession('missing')).toBeNull();
      });

      it('closes exactly the open sessions last touched before idleSince', async () => {
        await openSession('old', 100);
        await openSession('boundary', 250);
        await openSession('touched', 50);
        await store.upsertSession({ id: 'touched', tenant: null, user: null, at: 300 });
        await openSession('done', 120);
        await store.closeSession('done', 'done', 130);

        expect((await store.closeIdleSessions(250, 400)).sort()).toEqual(['old']);
        expect(await store.getSession('old')).toMatchObject({ status: 'closed', closedAt: 400, closeReason: 'idle' });
        expect(await store.getSession('boundary')).toMatchObject({ status: 'open' });
        expect(await store.getSession('touched')).toMatchObject({ status: 'open' });
        expect(await store.getSession('done')).toMatchObject({ closedAt: 130, closeReason: 'done' });
        expect(await store.closeIdleSessions(250, 500)).toEqual([]);
        expect((await store.closeIdleSessions(1_000, 600)).sort()).toEqual(['boundary', 'touched']);
      });

      it('lists sessions newest first, filtered by status, with limit and offset', async () => {
        for (const [position, id] of ['a', 'b', 'c', 'd'].entries()) await openSession(id, 100 + position);
        await store.upsertSession({ id: 'a', tenant: null, user: null, at: 900 });
        await store.closeSession('c', 'done', 950);

        const ids = async (listed: Promise<{ id: string }[]>) => (await listed).map((session) => session.id);
        expect(await ids(store.listSessions())).toEqual(['d', 'c', 'b', 'a']);
        expect(await ids(store.listSessions({ status: 'open' }))).toEqual(['d', 'b', 'a']);
        expect(await ids(store.listSessions({ status: 'closed' }))).toEqual(['c']);
        expect(await ids(store.listSessions({ limit: 2 }))).toEqual(['d', 'c']);
        expect(await ids(store.listSessions({ limit: 2, offset: 1 }))).toEqual(['c', 'b']);
        expect(await ids(store.listSessions({ status: 'open', offset: 2 }))).toEqual(['a']);
        expect(await ids(store.listSessions({ offset: 10 }))).toEqual([]);
      });

      it('lists one user\'s sessions, within a tenant when it names one', async () => {
        await store.upsertSession({ id: 'alice-1', tenant: 'acme', user: 'acme/alice', at: 100 });
        await store.upsertSession({ id: 'bob-1', tenant: 'acme', user: 'acme/bob', at: 110 });
        await store.upsertSession({ id: 'alice-2', tenant: 'acme', user: 'acme/alice', at: 120 });
        await store.closeSession('alice-1', 'done', 130);
        const ids = async (listed: Promise<{ id: string }[]>) => (await listed).map((session) => session.id);
        expect(await ids(store.listSessions({ user: 'acme/alice' }))).toEqual(['alice-2', 'alice-1']);
        expect(await ids(store.listSessions({ user: 'acme/alice', status: 'closed' }))).toEqual(['alice-1']);
        expect(await ids(store.listSessions({ user: 'acme/alice', tenant: 'other' }))).toEqual([]);
        expect((await store.getSession('bob-1'))?.user).toBe('acme/bob');
      });

      it('lists at most 100 sessions by default', async () => {
        for (let position = 0; position < 101; position += 1) await openSession(`s${position}`, position);
        const listed = await store.listSessions();
        expect(listed).toHaveLength(100);
        expect(listed[0]?.id).toBe('s100');
      });

      it('lists each session with its main turn ids oldest first and its side turn count', async () => {
        await openSession('s1', 100);
        await store.recordTurn(newTurn({ id: 'm0', sessionId: 's1' }));
        await store.recordTurn(newTurn({ id: 'side0', sessionId: 's1', type: 'side', trainable: false }));
        await store.recordTurn(newTurn({ id: 'm1', sessionId: 's1' }));
        const [listed] = await store.listSessions();
        expect(listed).toMatchObject({ id: 's1', turnIds: ['m0', 'm1'], sideTurns: 1 });
        expect(await store.getSession('s1')).toEqual(listed);
      });
    });

    describe('turns', () => {
      it('assigns per-session main indexes 0, 1, 2 and -1 to side turns', async () => {
        await openSession('s1');
        await openSession('s2');
        const recorded = [];
        for (const [id, sessionId, type] of [
          ['a0', 's1', 'main'],
          ['b0', 's2', 'main'],
          ['a-side', 's1', 'side'],
          ['a1', 's1', 'main'],
          ['b1', 's2', 'main'],
          ['a2', 's1', 'main'],
        ] as const) {
          recorded.push(await store.recordTurn(newTurn({ id, sessionId, type })));
        }
        expect(recorded.map((turn) => [turn.id, turn.index])).toEqual([
          ['a0', 0],
          ['b0', 0],
          ['a-side', -1],
          ['a1', 1],
          ['b1', 1],
          ['a2', 2],
        ]);
        for (const turn of recorded) expect(await store.getTurn(turn.id)).toEqual(turn);
        const byId = new Map(recorded.map((turn) => [turn.id, turn]));
        // In the order asked, each once, unknown ids left out.
        expect(await store.getTurns(['a2', 'missing', 'b0', 'a-side', 'a2'])).toEqual(
          ['a2', 'b0', 'a-side'].map((id) => byId.get(id)),
        );
        expect(await store.getTurns([])).toEqual([]);
        expect(await store.getSession('s1')).toMatchObject({ turnIds: ['a0', 'a1', 'a2'], sideTurns: 1 });
        expect(await store.getSession('s2')).toMatchObject({ turnIds: ['b0', 'b1'], sideTurns: 0 });
      });

      it('rejects a duplicate turn id with store_error and leaves the first turn and the indexes intact', async () => {
        await openSession('s1');
        await openSession('s2');
        const first = await store.recordTurn(newTurn({ id: 't1', sessionId: 's1' }));
        await expectStoreError(store.recordTurn(newTurn({ id: 't1', sessionId: 's1', model: 'other' })));
        await expectStoreError(store.recordTurn(newTurn({ id: 't1', sessionId: 's2' })));
        expect(await store.getTurn('t1')).toEqual(first);
        expect((await store.recordTurn(newTurn({ id: 't2', sessionId: 's1' }))).index).toBe(1);
        expect((await store.recordTurn(newTurn({ id: 't3', sessionId: 's2' }))).index).toBe(0);
      });

      it('rejects a turn of an unknown session with store_error and records nothing', async () => {
        await expectStoreError(store.recordTurn(newTurn({ id: 't1', sessionId: 'missing' })));
        expect(await store.getTurn('t1')).toBeNull();
        expect((await store.counts()).turns).toMatchObject({ main: 0, side: 0 });
      });

      it('accepts turns of a closed session', async () => {
        await openSession('s1');
        await store.closeSession('s1', 'idle', 200);
        expect((await store.recordTurn(newTurn({ id: 'late', sessionId: 's1' }))).index).toBe(0);
      });

      it('round-trips every field of a turn exactly', async () => {
        await openSession('s1');
        const toolCallReply: ChatMessage = {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'call_1', name: 'calculator', arguments: '{"expression":"2+3"}' },
            { id: 'call_2', name: 'search', arguments: '{not json' },
          ],
        };
        const rich = newTurn({
          id: 'rich',
          sessionId: 's1',
          status: 'failed',
          trainable: false,
          tenant: 'tenant-a', user: 'tenant-a',
          model: 'qwen3-0.6b',
          policyVersion: 7,
          messages: [
            { role: 'system', content: 'You are terse.\n\tTabs, "quotes", émoji 🧮, \u0000 nul.' },
            { role: 'user', content: 'Compute 2+3', name: 'student' },
            toolCallReply,
            { role: 'tool', content: '5', toolCallId: 'call_1' },
            { role: 'tool', content: '', toolCallId: 'call_2', name: 'search' },
            { role: 'user', content: '' },
          ],
          tools: [
            {
              name: 'calculator',
              description: 'Evaluates arithmetic',
              parameters: {
                type: 'object',
                properties: { expression: { type: 'string', enum: ['a', 'b'] } },
                required: ['expression'],
                additionalProperties: false,
              },
            },
            { name: 'noop' },
          ],
          sampling: {
            maxTokens: 64,
            temperature: 0.6,
            topP: 0.95,
            topK: 20,
            stop: ['</s>', '\n\n'],
            seed: 42,
            n: 2,
            topLogprobs: 4,
          },
          promptTokenIds: [0, 1, 151_643, 2_147_483_647, 0, 7],
          responseTokenIds: [9, 0, 151_645],
          logprobs: [0.1 + 0.2 - 1, -1e-300, -Math.PI],
          response: toolCallReply,
          finishReason: 'tool_calls',
          timings: { startedAt: 1_700_000_000_123, firstTokenAt: null, endedAt: 1_700_000_000_456 },
          error: 'engine crashed: out of memory',
          replyKey: 'reply-key-1',
        });
        const expected = { ...rich, index: 0, nextState: null, nextStateAt: null };
        expect(await store.recordTurn(rich)).toEqual(expected);
        expect(await store.getTurn('rich')).toEqual(expected);

        const exactFloats = newTurn({
          id: 'floats',
          sessionId: 's1',
          responseTokenIds: [1, 2, 3, 4, 5, 6],
          logprobs: [0.1 + 0.2 - 1, -1e-300, -Number.MIN_VALUE, -0, -Infinity, -Math.PI],
        });
        await store.recordTurn(exactFloats);
        const floats = (await store.getTurn('floats'))?.logprobs ?? [];
        expect(floats.map((value) => Object.is(value, -0))).toEqual([false, false, false, true, false, false]);
        expect(floats).toEqual(exactFloats.logprobs);
      });

      it('keeps empty lists and strings distinct from null', async () => {
        await openSession('s1');
        const empty = newTurn({
          id: 'empty',
          sessionId: 's1',
          messages: [],
          tools: [],
          promptTokenIds: [],
          responseTokenIds: [],
          logprobs: [],
          response: { role: 'assistant', content: '', toolCalls: [] },
          error: '',
          replyKey: '',
          timings: { startedAt: 0, firstTokenAt: 0, endedAt: 0 },
        });
        expect(await store.recordTurn(empty)).toEqual({ ...empty, index: 0, nextState: null, nextStateAt: null });
        expect(await store.getTurn('empty')).toEqual({ ...empty, index: 0, nextState: null, nextStateAt: null });
        expect(await store.getTurn('missing')).toBeNull();
      });

      it('reconstructs turns whose prompts and messages extend, branch, shrink or repeat earlier turns', async () => {
        await openSession('s1');
        const system: ChatMessage = { role: 'system', content: 'system prompt' };
        const user = (content: string): ChatMessage => ({ role: 'user', content });
        const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });
        const q1 = [system, user('q1')];
        // [id, messages, prompt ids, response ids]; each prompt relates differently to the ones before.
        const rows: [string, ChatMessage[], number[], number[]][] = [
          ['first', q1, [1, 2, 3], [4, 5]],
          ['extends', [...q1, assistant('a1'), user('q2')], [1, 2, 3, 4, 5, 6], [7]],
          ['side', [system, user('heartbeat')], [1, 2, 99], [4, 5]],
          ['reaches-into-response', [...q1, assistant('a1')], [1, 2, 3, 4, 5, 6, 7, 8, 9], [4, 5]],
          ['branch', [system, user('q1 edited'), assistant('a1')], [1, 2, 30, 40], [4, 5]],
          ['shrink', [system], [1], [4, 5]],
          ['unrelated', [user('other')], [50, 51], [4, 5]],
          ['repeat', [user('other')], [50, 51], [4, 5]],
          ['empty-response', [user('other')], [50, 51, 4], []],
          ['after-empty-response', [user('other')], [50, 51, 4, 8], [4, 5]],
        ];
        const turns = rows.map(([id, messages, promptTokenIds, responseTokenIds]) =>
          newTurn({
            id,
            sessionId: 's1',
            type: id === 'side' ? 'side' : 'main',
            messages,
            promptTokenIds,
            responseTokenIds,
            logprobs: responseTokenIds.map((tokenId) => -tokenId / 10),
          }),
        );
        for (const turn of turns) await store.recordTurn(turn);
        for (const turn of turns) {
          expect(await store.getTurn(turn.id)).toMatchObject({
            messages: turn.messages,
            promptTokenIds: turn.promptTokenIds,
            responseTokenIds: turn.responseTokenIds,
            logprobs: turn.logprobs,
          });
        }
      });

      it('reconstructs the first turns of sessions that open with the same long prompt, and of one that does not', async () => {
        // An agent's sessions all begin with its system prompt and tool schemas: far more ids than
        // any store's minimum for sharing them across sessions.
        const shared = Array.from({ length: 1_500 }, (_, index) => (index * 7919) % 50_000);
        const rows: [string, number[]][] = [
          ['a', [...shared, 1, 2, 3]],
          ['b', [...shared, 4, 5]],
          ['c', shared.slice(0, 1_200)],
          ['d', [9, ...shared]],
          ['e', [...shared, 1, 2, 3, 6]],
        ];
        const turns = rows.map(([session, promptTokenIds]) =>
          newTurn({ id: `first-of-${session}`, sessionId: session, promptTokenIds }),
        );
        for (const turn of turns) {
          await openSession(turn.sessionId);
          await store.recordTurn(turn);
        }
        await store.recordTurn(newTurn({ id: 'second-of-b', sessionId: 'b', promptTokenIds: [...shared, 4, 5, 4, 5, 8] }));
        for (const turn of turns) {
          expect((await store.getTurn(turn.id))?.promptTokenIds).toEqual(turn.promptTokenIds);
        }
        expect((await store.getTurn('second-of-b'))?.promptTokenIds).toEqual([...shared, 4, 5, 4, 5, 8]);
      });

      it('returns the last main turn of a session whatever its status', async () => {
        await openSession('s1');
        await openSession('s2');
        expect(await store.getLastMainTurn('s1')).toBeNull();
        await store.recordTurn(newTurn({ id: 'side-only', sessionId: 's1', type: 'side' }));
        expect(await store.getLastMainTurn('s1')).toBeNull();
        await store.recordTurn(newTurn({ id: 'm0', sessionId: 's1' }));
        const aborted = await store.recordTurn(
          newTurn({ id: 'm1', sessionId: 's1', status: 'aborted', trainable: false }),
        );
        await store.recordTurn(newTurn({ id: 'side-later', sessionId: 's1', type: 'side' }));
        await store.recordTurn(newTurn({ id: 'other', sessionId: 's2' }));
        expect(await store.getLastMainTurn('s1')).toEqual({ id: aborted.id, replyKey: aborted.replyKey, linked: false });
        await store.linkNextState('m1', [{ role: 'user', content: 'next' }], 500);
        expect(await store.getLastMainTurn('s1')).toEqual({ id: 'm1', replyKey: aborted.replyKey, linked: true });
        expect(await store.getLastMainTurn('missing')).toBeNull();
      });

      it('links a main turn next state once: the first link wins', async () => {
        await openSession('s1');
        await store.recordTurn(newTurn({ id: 't1', sessionId: 's1' }));
        await store.recordTurn(newTurn({ id: 't2', sessionId: 's1' }));
        await store.recordTurn(newTurn({ id: 'side', sessionId: 's1', type: 'side' }));
        const nextState: ChatMessage[] = [
          { role: 'tool', content: '5', toolCallId: 'call_1' },
          { role: 'user', content: 'thanks, but be shorter' },
        ];
        expect(await store.linkNextState('t1', nextState, 500)).toBe(true);
        expect(await store.linkNextState('t1', [{ role: 'user', content: 'late' }], 600)).toBe(false);
        expect(await store.getTurn('t1')).toMatchObject({ nextState, nextStateAt: 500 });
        expect(await store.linkNextState('t2', [], 700)).toBe(true);
        expect(await store.linkNextState('t2', nextState, 800)).toBe(false);
        expect(await store.getTurn('t2')).toMatchObject({ nextState: [], nextStateAt: 700 });
        expect(await store.linkNextState('missing', nextState, 900)).toBe(false);
        expect(await store.linkNextState('side', nextState, 900)).toBe(false);
        expect(await store.getTurn('side')).toMatchObject({ nextState: null, nextStateAt: null });
      });

      it('finds the turn that recorded a reply key only while its session is open', async () => {
        await openSession('s1');
        await openSession('s2');
        await store.recordTurn(newTurn({ id: 't1', sessionId: 's1', replyKey: 'key-a' }));
        await store.recordTurn(newTurn({ id: 't2', sessionId: 's2', replyKey: 'key-b' }));
        await store.recordTurn(newTurn({ id: 't3', sessionId: 's2', replyKey: null }));
        expect(await store.findByReplyKey('key-a')).toEqual({ sessionId: 's1', turnId: 't1' });
        expect(await store.findByReplyKey('key-b')).toEqual({ sessionId: 's2', turnId: 't2' });
        expect(await store.findByReplyKey('unknown')).toBeNull();

        await store.closeSession('s1', 'done', 500);
        expect(await store.findByReplyKey('key-a')).toBeNull();
        await openSession('s1', 600);
        expect(await store.findByReplyKey('key-a')).toEqual({ sessionId: 's1', turnId: 't1' });

        await openSession('s3', 700);
        await store.recordTurn(newTurn({ id: 't4', sessionId: 's3', replyKey: 'key-b' }));
        await store.closeSession('s3', 'idle', 800);
        expect(await store.findByReplyKey('key-b')).toEqual({ sessionId: 's2', turnId: 't2' });
      });
    });

    it('remembers the version that served a session\'s first turn', async () => {
      await openSession('s1');
      for (const [index, id] of ['a', 'b'].entries()) await store.recordTurn(newTurn({ id, sessionId: 's1', policyVersion: index }));
      expect(await store.getSessionPolicyVersion('s1')).toBe(0);
      expect(await store.getSessionPolicyVersion('unknown')).toBeNull();
    });
  });
}
