/**
 * The `RecordErasure` contract (`spec/record-erasure.ts`): erasing a session, a tenant or a period
 * takes every row that holds what it said, keeps what other sessions share with it exactly as it
 * was, keeps the counts true, and keeps the lineage that names the versions it trained.
 * `runRecordStoreContract` runs it, so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import type { RecordStore } from '../spec/record-store.js';
import type { StoreCounts } from '../spec/records.js';
import { judgement, newPolicyVersion, newTurn, sample, trainingMetrics } from './testing/record-fixtures.js';

const marker = 'zebra-marker-7731';
const systemPrompt: ChatMessage = { role: 'system', content: 'You are a careful agent. '.repeat(20) };
// Long enough (over 256 ids) that a session's first turn is stored against another session's.
const sharedPrompt = Array.from({ length: 300 }, (_, index) => 10 + index);

export function runRecordErasureContract(getStore: () => RecordStore, recount: (store: RecordStore) => Promise<StoreCounts>): void {
  describe('erasure', () => {
    let store: RecordStore;

    const step = async (number: number, sampleIds: string[]) => {
      await store.commitTrainingStep({
        step: { step: number, policyVersion: number, trainedSampleIds: sampleIds, metrics: trainingMetrics, checkpoint: null, startedAt: 6_000, endedAt: 6_100 },
        version: newPolicyVersion(number),
        workerId: 'trainer-1',
      });
    };

    beforeEach(async () => {
      store = getStore();
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.upsertSession({ id: 'gone', tenant: 'bob', user: 'bob', at: 100 });
      await store.upsertSession({ id: 'kept', tenant: 'alice', user: 'alice', at: 100 });
      await store.recordTurn(
        newTurn('g1', { sessionId: 'gone', tenant: 'bob', user: 'bob', messages: [systemPrompt, { role: 'user', content: `my secret is ${marker}` }], promptTokenIds: sharedPrompt, response: { role: 'assistant', content: `noted ${marker}` } }),
      );
      await store.recordTurn(
        newTurn('k1', { sessionId: 'kept', tenant: 'alice', user: 'alice', messages: [systemPrompt, { role: 'user', content: 'hello' }], promptTokenIds: [...sharedPrompt, 7, 7], timings: { startedAt: 3_000, firstTokenAt: 3_010, endedAt: 3_020 } }),
      );
      await store.linkNextState('g1', [{ role: 'user', content: `no, ${marker}` }], 1_100);
      await store.recordJudgement(judgement('g1', { hint: `say ${marker}`, createdAt: 1_200 }));
      await store.recordFeedback({ turnId: 'g1', score: -1, text: `bad ${marker}`, hint: null, tenant: 'bob', user: 'bob', createdAt: 1_300 });
      await store.recordSample(sample('sample-g1', 'g1', { policyVersion: 0, hint: `say ${marker}` }));
      await store.recordSample(sample('sample-k1', 'k1', { policyVersion: 0 }));
      await step(1, ['sample-g1']);
      await step(2, ['sample-k1']);
    });

    it('erases a session with everything derived from it, keeps what another session shares, and names the versions it trained', async () => {
      const keptBefore = await store.getTurn('k1');
      const { receipt, turnIds, sessionIds, sampleIds } = await store.erase({ kind: 'session', sessionId: 'gone' }, 9_000);
      expect(receipt.erased).toMatchObject({ sessions: 1, turns: 1, nextStates: 1, judgements: 1, feedback: 1, hints: 1, samples: 1 });
      // The user message with the marker went; the system prompt the other session shares stayed.
      expect(receipt.erased.messages).toBe(1);
      expect(receipt.trainedOnErased).toEqual([1]);
      expect(receipt.affectedVersions).toEqual([1, 2]);
      expect({ turnIds, sessionIds, sampleIds }).toEqual({ turnIds: ['g1'], sessionIds: ['gone'], sampleIds: ['sample-g1'] });

      expect(await store.getTurn('g1')).toBeNull();
      expect(await store.getSession('gone')).toBeNull();
      expect(await store.listFeedback('g1')).toEqual([]);
      expect(await store.listJudgements('g1')).toEqual([]);
      expect((await store.listSamples({})).map((entry) => entry.id)).toEqual(['sample-k1']);
      expect(await store.getTurn('k1')).toEqual(keptBefore);
      expect(await store.counts()).toEqual(await recount(store));

      expect(await store.listLineage(1)).toEqual([{ sampleId: 'sample-g1', erased: true }]);
      expect(await store.listLineage(2)).toEqual([{ sampleId: 'sample-k1', erased: false }]);
      expect(await store.listTaintedVersions()).toEqual([
        { version: 1, erasedSamples: 1, markedAt: 9_000, retiredAt: null },
        { version: 2, erasedSamples: 0, markedAt: 9_000, retiredAt: null },
      ]);
      expect(await store.retireVersions([1, 2], 9_500)).toBe(2);
      expect((await store.listTaintedVersions()).map((entry) => entry.retiredAt)).toEqual([9_500, 9_500]);
      // Retraining: the remaining sample that trained a tainted version is ready again.
      expect(await store.requeueSamplesOf([1, 2], 9_600)).toBe(1);
      expect((await store.listSamples({ status: 'ready' })).map((entry) => entry.id)).toEqual(['sample-k1']);
      expect(await store.counts()).toEqual(await recount(store));
    });

    it('keeps recording after an erasure: a new turn of the remaining session rebuilds exactly', async () => {
      await store.erase({ kind: 'session', sessionId: 'gone' }, 9_000);
      await store.upsertSession({ id: 'gone', tenant: 'bob', user: 'bob', at: 9_100 });
      const again = newTurn('g2', { sessionId: 'gone', messages: [systemPrompt, { role: 'user', content: 'fresh' }], promptTokenIds: [...sharedPrompt, 1] });
      await store.recordTurn(again);
      await store.recordTurn(newTurn('k2', { sessionId: 'kept', messages: [systemPrompt, { role: 'user', content: 'hello' }, { role: 'user', content: 'more' }], promptTokenIds: [...sharedPrompt, 7, 7, 4, 5, 8] }));
      expect((await store.getTurn('g2'))?.promptTokenIds).toEqual(again.promptTokenIds);
      expect((await store.getTurn('g2'))?.messages).toEqual(again.messages);
      expect((await store.getTurn('k2'))?.promptTokenIds).toEqual([...sharedPrompt, 7, 7, 4, 5, 8]);
      expect(await store.counts()).toEqual(await recount(store));
    });

    it('erases a tenant\'s sessions and feedback', async () => {
      const { receipt } = await store.erase({ kind: 'tenant', tenant: 'bob' }, 9_000);
      expect(receipt.erased).toMatchObject({ sessions: 1, turns: 1, feedback: 1 });
      expect((await store.listSessions({})).map((session) => session.id)).toEqual(['kept']);
    });

    it('erases one user of a tenant, and what that user said of another user\'s turn, leaving the tenant\'s other users', async () => {
      await store.upsertSession({ id: 'carol', tenant: 'bob', user: 'bob/carol', at: 200 });
      await store.recordTurn(newTurn('c1', { sessionId: 'carol', tenant: 'bob', user: 'bob/carol', messages: [systemPrompt, { role: 'user', content: 'carol here' }], promptTokenIds: [...sharedPrompt, 9] }));
      await store.recordFeedback({ turnId: 'k1', score: 1, text: 'carol likes it', hint: null, tenant: 'bob', user: 'bob/carol', createdAt: 1_400 });
      const { receipt } = await store.erase({ kind: 'user', user: 'bob/carol' }, 9_000);
      expect(receipt.erased).toMatchObject({ sessions: 1, turns: 1, feedback: 1 });
      expect((await store.listSessions({})).map((session) => session.id).sort()).toEqual(['gone', 'kept']);
      expect(await store.listFeedback('k1')).toEqual([]);
      expect(await store.listFeedback('g1')).toHaveLength(1);
      expect(await store.counts()).toEqual(await recount(store));
    });

    it('erases the turns that started before a time, keeping a session\'s later turns whole', async () => {
      await store.recordTurn(newTurn('g3', { sessionId: 'gone', promptTokenIds: [...sharedPrompt, 4, 5, 6], timings: { startedAt: 5_000, firstTokenAt: 5_010, endedAt: 5_020 } }));
      const later = await store.getTurn('g3');
      const { receipt } = await store.erase({ kind: 'before', before: 2_000 }, 9_000);
      expect(receipt.erased).toMatchObject({ turns: 1, sessions: 0, samples: 1 });
      expect(await store.getTurn('g1')).toBeNull();
      expect(await store.getTurn('g3')).toEqual(later);
      expect(await store.getTurn('k1')).not.toBeNull();
      expect(await store.counts()).toEqual(await recount(store));
    });

    it('erases nothing for an unknown session', async () => {
      const { receipt } = await store.erase({ kind: 'session', sessionId: 'nobody' }, 9_000);
      expect(receipt.erased).toEqual({ sessions: 0, turns: 0, messages: 0, nextStates: 0, judgements: 0, feedback: 0, hints: 0, samples: 0, queued: 0, memoryEntries: 0 });
      expect(receipt.affectedVersions).toEqual([]);
    });
  });
}
