/**
 * The counts' part of the `RecordReads` contract: `counts()` follows every kind of write that
 * changes one, and equals a full recount of the rows (stores keep the counts as counters, so a
 * missed write shows here). `runRecordStoreContract` runs it with the store's own recount.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { NewTurn, StoreCounts } from '../spec/records.js';
import { judgement, newTurn, sample, verdict } from './testing/record-fixtures.js';

/** A turn of version 3 (what the samples of `sample` say). */
const turn = (id: string, overrides: Partial<NewTurn> = {}): NewTurn => newTurn(id, { policyVersion: 3, ...overrides });

export function runRecordCountsContract(currentStore: () => RecordStore, recount: (store: RecordStore) => Promise<StoreCounts>): void {
  describe('counts', () => {
    let store: RecordStore;
    const expectRecounted = async (): Promise<StoreCounts> => {
      const counts = await store.counts();
      expect(counts).toEqual(await recount(store));
      return counts;
    };

    beforeEach(() => {
      store = currentStore();
    });

    it('count sessions and turns', async () => {
      expect(await store.counts()).toEqual({
        sessions: { open: 0, closed: 0 },
        turns: { main: 0, side: 0, aborted: 0, failed: 0, trainable: 0 },
        linked: 0,
        judging: expect.objectContaining({ judged: 0, pending: 0 }),
      });
      for (const id of ['s1', 's2', 's3']) await store.upsertSession({ id, tenant: null, user: null, at: 100 });
      await store.closeSession('s3', 'done', 200);
      await store.recordTurn(turn('m0'));
      await store.recordTurn(turn('m1'));
      await store.recordTurn(turn('aborted', { sessionId: 's2', status: 'aborted', trainable: false }));
      await store.recordTurn(turn('failed', { sessionId: 's2', status: 'failed', trainable: false }));
      await store.recordTurn(turn('side', { sessionId: 's2', type: 'side', trainable: false }));
      await store.linkNextState('m0', [{ role: 'user', content: 'ok' }], 300);
      expect(await store.counts()).toEqual({
        sessions: { open: 2, closed: 1 },
        turns: { main: 4, side: 1, aborted: 1, failed: 1, trainable: 2 },
        linked: 1,
        judging: expect.objectContaining({ judged: 0, pending: 1 }),
      });
    });

    it('equal a full recount after a mixed sequence of writes', async () => {
      await expectRecounted();
      for (const id of ['s1', 's2', 's3']) await store.upsertSession({ id, tenant: null, user: null, at: 100 });
      await store.recordTurn(turn('a'));
      await store.recordTurn(turn('b'));
      await store.recordTurn(turn('side', { type: 'side' }));
      await store.recordTurn(turn('aborted', { status: 'aborted', trainable: false }));
      await store.recordTurn(turn('failed', { sessionId: 's2', status: 'failed', trainable: false, error: 'upstream' }));
      await store.recordTurn(turn('c', { sessionId: 's2' }));
      await store.recordTurn(turn('d', { sessionId: 's3' }));
      await store.recordTurn(turn('e', { sessionId: 's3' }));
      await expectRecounted();
      // Closing s3 leaves d and e without a next state; linking one and feedback on the other take them out.
      await store.closeSession('s3', 'done', 300);
      expect((await expectRecounted()).judging.withoutNextState).toBe(2);
      await store.linkNextState('d', [{ role: 'user', content: 'ok' }], 310);
      await store.linkNextState('d', [{ role: 'user', content: 'again' }], 311);
      await store.recordFeedback({ turnId: 'e', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 320 });
      await store.recordFeedback({ turnId: 'e', score: -1, text: null, hint: null, tenant: null, user: null, createdAt: 321 });
      expect((await expectRecounted()).judging.withoutNextState).toBe(0);
      // Reopening s3 and closing s1 and s2 as idle move their turns.
      await store.upsertSession({ id: 's3', tenant: null, user: null, at: 400 });
      expect(await store.closeIdleSessions(250, 500)).toEqual(expect.arrayContaining(['s1', 's2']));
      await store.recordTurn(turn('late', { sessionId: 's1' }));
      expect((await expectRecounted()).sessions).toEqual({ open: 1, closed: 2 });

      // Judging: queued by links and feedback, a failed attempt (retrying), a done one, judgements
      // replaced under their identity (e's last one drops the accepted hint of the one before).
      for (const id of ['a', 'b', 'c']) await store.linkNextState(id, [{ role: 'user', content: 'ok' }], 600);
      const [first, second] = await store.claimTurnsForJudging({ limit: 2, leaseMs: 1_000, now: 700, workerId: 'judge' });
      if (first === undefined || second === undefined) throw new Error('expected two claimed turns');
      await store.releaseTurn({ turnId: first.turn.id, workerId: 'judge', generation: first.generation, outcome: { kind: 'failed', error: 'timeout', retryAt: 800 } });
      await expectRecounted();
      await store.recordJudgement(judgement(second.turn.id, { latencyMs: 80 }));
      await store.releaseTurn({ turnId: second.turn.id, workerId: 'judge', generation: second.generation, outcome: { kind: 'done' } });
      const hintVote = { kind: 'hint', text: '\\boxed{-1}', score: -1, hint: 'Say less.', rejection: null } as const;
      await store.recordJudgement(judgement(second.turn.id, { votes: [verdict(-1), hintVote], score: -1, hint: 'Say less.', latencyMs: 150.5 }));
      await store.recordJudgement(judgement('c', { judge: 'rules', votes: [hintVote], latencyMs: 33 }));
      await store.recordJudgement(judgement('e', { votes: [verdict(1), verdict(0)] }));
      const counted = await expectRecounted();
      expect(counted.judging).toMatchObject({ judged: 2, pending: 4, retrying: 1, hintsAccepted: 0, hintsRejected: 1 });

      // Samples: live and rollout, ready, superseded, trained and dropped.
      const rollout = { runId: 'run', environment: 'arithmetic', step: 1, group: 'g', turnIndex: 0, outcomeReward: 1, processReward: 0, reward: 1 };
      const rolled = await store.recordFeedback({ turnId: 'c', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 900, rollout });
      await store.recordSample(sample('live', 'a'));
      await store.recordSample(sample('rolled', 'c', { feedbackId: rolled?.id ?? null }));
      await store.recordSample(sample('rolled-again', 'c', { feedbackId: rolled?.id ?? null }));
      await store.recordSample(sample('dropped', 'b', { status: 'dropped', dropReason: 'no-hint', lossMask: [], distillationGaps: null, teacherLogprobs: null, support: null }));
      await expectRecounted();
      await store.updateSampleStatus({ ids: ['live'], status: 'trained', at: 1_000 });
      await store.updateSampleStatus({ ids: ['rolled-again', 'live'], status: 'dropped', reason: 'stale', at: 1_010 });
      const final = await expectRecounted();
      expect(final.judging.rolloutSamples.ready + final.judging.rolloutSamples.dropped).toBe(2);
    });
  });
}
