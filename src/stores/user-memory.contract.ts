/**
 * What every store's `UserMemory` role does (`spec/user-memory.ts`): entries per user, oldest first;
 * deduplicated by normalized text; bounded per user, the least recently written dropped; editable
 * and deletable by their user only; the users listed with their counts; and erased with the turn
 * they came from and with their tenant. `runRecordStoreContract` runs it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { NewMemoryEntry } from '../spec/user-memory.js';
import { newTurn } from './testing/record-fixtures.js';

const entry = (user: string, text: string, at: number, overrides: Partial<NewMemoryEntry> = {}): NewMemoryEntry => ({
  user,
  kind: 'hint',
  text,
  sourceTurnId: null,
  at,
  ...overrides,
});

export function runUserMemoryContract(currentStore: () => RecordStore): void {
  describe('user memory', () => {
    let store: RecordStore;
    const texts = async (user: string) => (await store.listMemory(user)).map((memory) => memory.text);

    beforeEach(() => {
      store = currentStore();
    });

    it('keeps each user\'s entries apart, oldest first, with what they came from', async () => {
      const added = await store.remember(entry('team/alice', 'Greet warmly.', 100, { sourceTurnId: 't1' }), 30);
      expect(added).toMatchObject({ outcome: 'added', droppedIds: [] });
      expect(added.entry).toEqual({ id: added.entry.id, user: 'team/alice', kind: 'hint', text: 'Greet warmly.', sourceTurnId: 't1', createdAt: 100, updatedAt: 100 });
      await store.remember(entry('team/bob', 'Use bullet points.', 110, { kind: 'feedback' }), 30);
      await store.remember(entry('team/alice', 'Answer in French.', 120, { kind: 'note' }), 30);
      expect(await texts('team/alice')).toEqual(['Greet warmly.', 'Answer in French.']);
      expect(await store.listMemory('team/bob')).toMatchObject([{ kind: 'feedback', text: 'Use bullet points.' }]);
      expect(await store.listMemory('team/carol')).toEqual([]);
    });

    it('refreshes an entry added again in other words, instead of keeping a copy', async () => {
      const first = await store.remember(entry('alice', 'Be warmer.', 100), 30);
      const again = await store.remember(entry('alice', '  be   WARMER! ', 200, { kind: 'feedback' }), 30);
      expect(again).toMatchObject({ outcome: 'repeated', droppedIds: [] });
      expect(again.entry).toMatchObject({ id: first.entry.id, text: 'Be warmer.', kind: 'hint', createdAt: 100, updatedAt: 200 });
      expect(await texts('alice')).toEqual(['Be warmer.']);
      // Another user's same words are that user's own entry.
      expect((await store.remember(entry('bob', 'Be warmer.', 300), 30)).outcome).toBe('added');
    });

    it('holds at most the bound per user, dropping the entry written least recently', async () => {
      const ids: number[] = [];
      for (const [index, text] of ['one', 'two', 'three'].entries()) ids.push((await store.remember(entry('alice', text, 100 + index), 3)).entry.id);
      // Repeating 'one' makes 'two' the least recently written.
      await store.remember(entry('alice', 'One', 200), 3);
      const fourth = await store.remember(entry('alice', 'four', 300), 3);
      expect(fourth).toMatchObject({ outcome: 'added', droppedIds: [ids[1]] });
      expect(await texts('alice')).toEqual(['one', 'three', 'four']);
      // The entry just written stays even when the clock went back.
      const late = await store.remember(entry('alice', 'five', 50), 3);
      expect(late.droppedIds).toEqual([ids[2]]);
      // Oldest first by creation: the late clock puts it first.
      expect(await texts('alice')).toEqual(['five', 'one', 'four']);
      await store.remember(entry('bob', 'other', 400), 1);
      expect(await store.listMemory('alice')).toHaveLength(3);
      await expect(store.remember(entry('alice', 'six', 500), 0)).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('edits an entry of its user only, and refuses text another of its entries holds', async () => {
      const kept = (await store.remember(entry('alice', 'Be brief.', 100), 30)).entry;
      const other = (await store.remember(entry('alice', 'Be warm.', 110), 30)).entry;
      expect(await store.editMemory('alice', kept.id, { text: 'Be very brief.', kind: 'note' }, 200)).toEqual({
        outcome: 'edited',
        entry: { ...kept, text: 'Be very brief.', kind: 'note', updatedAt: 200 },
      });
      expect(await store.editMemory('alice', kept.id, { text: 'be warm' }, 210)).toEqual({ outcome: 'duplicate', existingId: other.id });
      expect(await store.editMemory('bob', kept.id, { text: 'Hijacked.' }, 220)).toEqual({ outcome: 'missing' });
      expect(await store.editMemory('alice', 999_999, { text: 'Nothing.' }, 230)).toEqual({ outcome: 'missing' });
      // Its own text in other words is no duplicate of itself.
      expect(await store.editMemory('alice', kept.id, { text: 'BE VERY BRIEF' }, 240)).toMatchObject({ outcome: 'edited', entry: { text: 'BE VERY BRIEF' } });
      expect(await texts('alice')).toEqual(['BE VERY BRIEF', 'Be warm.']);
    });

    it('deletes an entry of its user only', async () => {
      const kept = (await store.remember(entry('alice', 'Be brief.', 100), 30)).entry;
      expect(await store.forgetMemory('bob', kept.id)).toBe(false);
      expect(await store.forgetMemory('alice', kept.id)).toBe(true);
      expect(await store.forgetMemory('alice', kept.id)).toBe(false);
      expect(await store.listMemory('alice')).toEqual([]);
      // Its text may be remembered again.
      expect((await store.remember(entry('alice', 'Be brief.', 200), 30)).outcome).toBe('added');
    });

    it('lists the users of sessions and of memory with their counts, a tenant\'s alone when asked', async () => {
      await store.upsertSession({ id: 's1', tenant: 'team', user: 'team/alice', at: 100 });
      await store.recordTurn(newTurn('t1', { tenant: 'team', user: 'team/alice' }));
      await store.recordFeedback({ turnId: 't1', score: 1, text: null, hint: null, tenant: 'team', user: 'team/alice', createdAt: 150 });
      await store.remember(entry('team/alice', 'Be brief.', 200), 30);
      await store.remember(entry('team/bob', 'Be warm.', 300), 30);
      await store.remember(entry('team', 'Shared.', 310), 30);
      await store.remember(entry('teammates/carol', 'Not the team.', 320), 30);
      await store.upsertSession({ id: 's2', tenant: null, user: null, at: 400 });
      const users = await store.listUsers({});
      expect(users).toEqual([
        { user: 'team', sessions: 0, turns: 0, feedback: 0, memoryEntries: 1, lastSeenAt: 310 },
        { user: 'team/alice', sessions: 1, turns: 1, feedback: 1, memoryEntries: 1, lastSeenAt: 200 },
        { user: 'team/bob', sessions: 0, turns: 0, feedback: 0, memoryEntries: 1, lastSeenAt: 300 },
        { user: 'teammates/carol', sessions: 0, turns: 0, feedback: 0, memoryEntries: 1, lastSeenAt: 320 },
      ]);
      expect((await store.listUsers({ tenant: 'team' })).map((user) => user.user)).toEqual(['team', 'team/alice', 'team/bob']);
    });

    it('goes with the turn it came from, and with every user of an erased tenant', async () => {
      await store.upsertSession({ id: 's1', tenant: 'team', user: 'team/alice', at: 100 });
      await store.recordTurn(newTurn('t1', { tenant: 'team', user: 'team/alice' }));
      await store.remember(entry('team/alice', 'From the turn.', 100, { sourceTurnId: 't1' }), 30);
      await store.remember(entry('team/alice', 'A note.', 110, { kind: 'note' }), 30);
      await store.remember(entry('other/dan', 'Elsewhere.', 120), 30);
      const session = await store.erase({ kind: 'session', sessionId: 's1' }, 1_000);
      expect(session.receipt.erased.memoryEntries).toBe(1);
      expect(await texts('team/alice')).toEqual(['A note.']);
      await store.remember(entry('team', 'The tenant itself.', 130), 30);
      const tenant = await store.erase({ kind: 'tenant', tenant: 'team' }, 2_000);
      expect(tenant.receipt.erased.memoryEntries).toBe(2);
      expect(await store.listMemory('team/alice')).toEqual([]);
      expect(await store.listMemory('team')).toEqual([]);
      expect(await texts('other/dan')).toEqual(['Elsewhere.']);
      // A user's erasure takes that user's memory whole, and no one else's.
      await store.remember(entry('other/erin', 'Stays.', 140), 30);
      const user = await store.erase({ kind: 'user', user: 'other/dan' }, 3_000);
      expect(user.receipt.erased.memoryEntries).toBe(1);
      expect(await store.listMemory('other/dan')).toEqual([]);
      expect(await texts('other/erin')).toEqual(['Stays.']);
    });
  });
}
