/**
 * What the record store keeps of a request's controls (`spec/turn-log.ts`): a turn the request kept
 * out of training (`X-Clawrl-Train: off`) and a turn a retry superseded are recorded, say why, and
 * never reach the judging queue; a superseded turn is passed over as the session's last turn; the
 * counts follow a turn marked after it was recorded. `runRecordStoreContract` runs it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { StoreCounts } from '../spec/records.js';
import { newTurn } from './testing/record-fixtures.js';

export function runRequestControlsContract(currentStore: () => RecordStore, recount: (store: RecordStore) => Promise<StoreCounts>): void {
  describe('request controls', () => {
    let store: RecordStore;
    const claimed = async (now: number) =>
      (await store.claimTurnsForJudging({ limit: 10, leaseMs: 1_000, now, workerId: 'w1' })).map((claim) => claim.turn.id);
    const feedback = (turnId: string, createdAt: number) =>
      store.recordFeedback({ turnId, score: 1, text: null, hint: null, tenant: null, user: null, createdAt });

    beforeEach(async () => {
      store = currentStore();
      await store.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
    });

    it('keeps a train-off turn, says why, and never queues it for judging', async () => {
      const recorded = await store.recordTurn(newTurn('off', { trainable: false, untrainableReason: 'train-off' }));
      expect(recorded).toMatchObject({ trainable: false, untrainableReason: 'train-off', supersededBy: null });
      expect(await store.getTurn('off')).toMatchObject({ trainable: false, untrainableReason: 'train-off', supersededBy: null });
      expect(await store.linkNextState('off', [{ role: 'user', content: 'thanks' }], 200)).toBe(true);
      await feedback('off', 300);
      expect(await claimed(1_000)).toEqual([]);
      expect(await store.getTurn('plain-missing')).toBeNull();
      await store.recordTurn(newTurn('plain'));
      expect(await store.getTurn('plain')).toMatchObject({ trainable: true, untrainableReason: null, supersededBy: null });
    });

    it('marks an unlinked main turn superseded: kept, untrainable, dequeued, passed over as the last turn', async () => {
      await store.recordTurn(newTurn('before'));
      await store.linkNextState('before', [{ role: 'user', content: 'go on' }], 150);
      await store.recordTurn(newTurn('orphan', { replyKey: 'key-orphan' }));
      // Feedback the orphan got before its retry arrived queued it; the mark takes it out again.
      await feedback('orphan', 160);
      expect(await store.markSuperseded('orphan', 'retry')).toBe(true);
      expect(await store.getTurn('orphan')).toMatchObject({ status: 'completed', trainable: false, untrainableReason: 'superseded', supersededBy: 'retry' });
      expect(await store.getLastMainTurn('s1')).toEqual({ id: 'before', replyKey: null, linked: true });
      expect(await claimed(1_000)).toEqual(['before']);
      await feedback('orphan', 170);
      // Only the lease of 'before' ran out: the orphan was never queued again.
      expect(await claimed(5_000)).toEqual(['before']);
      await store.recordTurn(newTurn('retry'));
      expect(await store.getLastMainTurn('s1')).toMatchObject({ id: 'retry' });
      expect((await store.getSession('s1'))?.turnIds).toEqual(['before', 'orphan', 'retry']);
      expect(await store.counts()).toEqual(await recount(store));
    });

    it('passes over a turn recorded superseded after its retry (a first attempt that was still generating)', async () => {
      await store.recordTurn(newTurn('retry'));
      await store.recordTurn(newTurn('orphan', { trainable: false, untrainableReason: 'superseded', supersededBy: 'retry' }));
      expect(await store.getLastMainTurn('s1')).toMatchObject({ id: 'retry' });
      expect(await store.getTurn('orphan')).toMatchObject({ trainable: false, untrainableReason: 'superseded', supersededBy: 'retry' });
    });

    it('keeps the first reason, and refuses linked, side and unknown turns', async () => {
      await store.recordTurn(newTurn('off', { trainable: false, untrainableReason: 'train-off' }));
      expect(await store.markSuperseded('off', 'retry')).toBe(true);
      expect(await store.getTurn('off')).toMatchObject({ untrainableReason: 'train-off', supersededBy: 'retry' });
      await store.recordTurn(newTurn('linked'));
      await store.linkNextState('linked', [{ role: 'user', content: 'next' }], 200);
      expect(await store.markSuperseded('linked', 'retry')).toBe(false);
      expect(await store.getTurn('linked')).toMatchObject({ trainable: true, supersededBy: null });
      await store.recordTurn(newTurn('side', { type: 'side', trainable: false }));
      expect(await store.markSuperseded('side', 'retry')).toBe(false);
      expect(await store.markSuperseded('missing', 'retry')).toBe(false);
    });

    it('count a turn marked superseded, in an open and in a closed session, as a full recount does', async () => {
      await store.upsertSession({ id: 's2', tenant: null, user: null, at: 100 });
      await store.recordTurn(newTurn('open-orphan'));
      await store.recordTurn(newTurn('closed-orphan', { sessionId: 's2' }));
      await store.closeSession('s2', 'done', 200);
      const before = await store.counts();
      expect(before.turns.trainable).toBe(2);
      expect(await store.markSuperseded('open-orphan', 'r1')).toBe(true);
      expect(await store.markSuperseded('closed-orphan', 'r2')).toBe(true);
      const after = await store.counts();
      expect(after.turns.trainable).toBe(0);
      expect(after).toEqual(await recount(store));
      // Marking again changes nothing it counts.
      expect(await store.markSuperseded('open-orphan', 'r3')).toBe(true);
      expect(await store.counts()).toEqual(after);
    });
  });
}
