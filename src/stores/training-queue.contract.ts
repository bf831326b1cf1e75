/**
 * The `TrainingQueue` contract (`spec/training-queue.ts`): sample leases for the trainer, and step
 * commits that write samples, the step and the policy registry in one write.
 * `runRecordStoreContract` runs it, so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { NewTrainingStep } from '../spec/records.js';
import { expectStoreError, newPolicyVersion, newTurn, sample, trainingMetrics as metrics } from './testing/record-fixtures.js';

function step(number: number, trainedSampleIds: string[]): NewTrainingStep {
  return { step: number, policyVersion: number, trainedSampleIds, metrics, checkpoint: `step-${number}`, startedAt: 6_000, endedAt: 6_100 };
}

export function runTrainingQueueContract(getStore: () => RecordStore): void {
  describe('training queue', () => {
    let store: RecordStore;

    beforeEach(async () => {
      store = getStore();
      await store.upsertSession({ id: 't1', tenant: null, user: null, at: 100 });
      for (const [index, id] of ['a', 'b', 'c'].entries()) {
        await store.recordTurn(newTurn(id, { sessionId: 't1', policyVersion: index, sampling: { temperature: 0.7, topP: 1, stop: [], n: 1, topLogprobs: 0 } }));
        await store.recordSample(
          sample(`sample-${id}`, id, { method: 'rl', policyVersion: index, hint: null, distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 3_000 + index }),
        );
      }
    });

    it('leases ready samples oldest first with the turn tokens and sampling temperature, once until the lease ends', async () => {
      const claimed = await store.claimSamplesForTraining({ limit: 2, leaseMs: 1_000, now: 10_000, workerId: 'trainer-1' });
      expect(claimed.map((sample) => sample.id)).toEqual(['sample-a', 'sample-b']);
      expect(claimed[0]).toMatchObject({ promptTokenIds: [1, 2, 3], responseTokenIds: [4, 5], rolloutLogprobs: [-0.5, -0.25], samplingTemperature: 0.7, group: null, status: 'ready' });
      const other = await store.claimSamplesForTraining({ limit: 5, leaseMs: 1_000, now: 10_500, workerId: 'trainer-2' });
      expect(other.map((sample) => sample.id)).toEqual(['sample-c']);
      // A crashed trainer's lease expires and its samples are claimable again.
      const afterExpiry = await store.claimSamplesForTraining({ limit: 5, leaseMs: 1_000, now: 11_000, workerId: 'trainer-2' });
      expect(afterExpiry.map((sample) => sample.id)).toEqual(['sample-a', 'sample-b']);
    });

    it('claims rollout groups whole, past the limit if need be, and never a group another trainer holds a part of', async () => {
      // After a, b, c (no group): groups g (d, f, h) and k (e, g2), interleaved as their feedback arrived.
      const members: [string, string | null, number][] = [['d', 'g', 0], ['e', 'k', 0], ['f', 'g', 0], ['g2', 'k', 0], ['h', 'g', 1]];
      for (const [index, [id, group, turnIndex]] of members.entries()) {
        await store.recordTurn(newTurn(id, { sessionId: 't1', policyVersion: 3 }));
        await store.recordSample(
          sample(`sample-${id}`, id, {
            method: 'rl', score: 1.5, hint: null, group: group === null ? null : { id: group, turnIndex },
            distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 4_000 + index,
          }),
        );
      }
      // The limit of 4 reaches d, the first of g: the rest of g comes with it, none of k.
      const first = await store.claimSamplesForTraining({ limit: 4, leaseMs: 1_000, now: 10_000, workerId: 'trainer-1' });
      expect(first.map((sample) => [sample.id, sample.group])).toEqual([
        ['sample-a', null], ['sample-b', null], ['sample-c', null],
        ['sample-d', { id: 'g', turnIndex: 0 }], ['sample-f', { id: 'g', turnIndex: 0 }], ['sample-h', { id: 'g', turnIndex: 1 }],
      ]);
      // Another trainer gets all of k, even with a limit of one, and nothing of g.
      const second = await store.claimSamplesForTraining({ limit: 1, leaseMs: 1_000, now: 10_100, workerId: 'trainer-2' });
      expect(second.map((sample) => sample.id)).toEqual(['sample-e', 'sample-g2']);
      expect(await store.claimSamplesForTraining({ limit: 10, leaseMs: 1_000, now: 10_200, workerId: 'trainer-3' })).toEqual([]);
      // Leases of one claim end together: the group comes back whole.
      const again = await store.claimSamplesForTraining({ limit: 4, leaseMs: 1_000, now: 11_000, workerId: 'trainer-3' });
      expect(again.map((sample) => sample.id)).toEqual(['sample-a', 'sample-b', 'sample-c', 'sample-d', 'sample-f', 'sample-h']);
    });

    it('copies each sample\'s user from its turn, counts ready samples per user, and claims one user\'s samples alone', async () => {
      await store.upsertSession({ id: 't2', tenant: 'acme', user: 'acme/ann', at: 100 });
      for (const [index, id] of ['d', 'e'].entries()) {
        await store.recordTurn(newTurn(id, { sessionId: 't2', tenant: 'acme', user: 'acme/ann' }));
        await store.recordSample(sample(`sample-${id}`, id, { method: 'rl', hint: null, distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 4_000 + index }));
      }
      expect((await store.listSamples({ turnId: 'd' }))[0]?.user).toBe('acme/ann');
      expect(await store.readySamplesByUser(10_000)).toEqual([{ user: null, ready: 3 }, { user: 'acme/ann', ready: 2 }]);
      const ann = await store.claimSamplesForTraining({ limit: 5, leaseMs: 1_000, now: 10_000, workerId: 'trainer-1', user: 'acme/ann' });
      expect(ann.map((claimed) => [claimed.id, claimed.user])).toEqual([['sample-d', 'acme/ann'], ['sample-e', 'acme/ann']]);
      // Leased samples are not counted; the global lineage's are the samples without a user.
      expect(await store.readySamplesByUser(10_000)).toEqual([{ user: null, ready: 3 }]);
      const global = await store.claimSamplesForTraining({ limit: 1, leaseMs: 1_000, now: 10_000, workerId: 'trainer-1', user: null });
      expect(global.map((claimed) => [claimed.id, claimed.user])).toEqual([['sample-a', null]]);
    });

    it('releases only the named worker\'s leases', async () => {
      await store.claimSamplesForTraining({ limit: 3, leaseMs: 60_000, now: 10_000, workerId: 'trainer-1' });
      expect(await store.releaseTrainingSamples({ workerId: 'someone-else' })).toBe(0);
      expect(await store.releaseTrainingSamples({ workerId: 'trainer-1', ids: ['sample-b'] })).toBe(1);
      expect((await store.claimSamplesForTraining({ limit: 3, leaseMs: 1, now: 10_001, workerId: 'x' })).map((sample) => sample.id)).toEqual(['sample-b']);
      expect(await store.releaseTrainingSamples({ workerId: 'trainer-1' })).toBe(2);
    });

    it('commits a step atomically: version, step, trained samples and the activation', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      const claimed = await store.claimSamplesForTraining({ limit: 2, leaseMs: 60_000, now: 10_000, workerId: 'trainer-1' });
      await store.updateSampleStatus({ ids: ['sample-a'], status: 'dropped', reason: 'stale', at: 10_001 });
      const committed = await store.commitTrainingStep({ step: step(1, claimed.slice(1).map((sample) => sample.id)), version: newPolicyVersion(1), workerId: 'trainer-1' });
      expect(committed).toEqual({ step: 1, policyVersion: 1, samplesUsed: 1, metrics, checkpoint: 'step-1', startedAt: 6_000, endedAt: 6_100 });
      expect((await store.listSamples({ turnId: 'b' }))[0]?.status).toBe('trained');
      expect((await store.listSamples({ turnId: 'a' }))[0]).toMatchObject({ status: 'dropped', dropReason: 'stale' });
      expect((await store.counts()).judging.samples).toEqual({ ready: 1, trained: 1, dropped: 1 });

      const versions = await store.listPolicyVersions();
      expect(versions.map((entry) => [entry.version, entry.parent, entry.active])).toEqual([[0, null, false], [1, 0, true]]);
      expect(versions[1]).toMatchObject({ kind: 'adapter', step: 1, samples: 2, metrics, bytes: 6 });
      expect(await store.getPolicyArtifact(1)).toEqual({ kind: 'adapter', files: newPolicyVersion(1).files });
      expect(await store.trainingSummary()).toEqual({ steps: 1, lastStep: committed, activeVersion: 1, latestVersion: 1 });
    });

    it('commits a candidate without activating it: serving stays on the incumbent until the gate decides', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.commitTrainingStep({ step: step(1, ['sample-a']), version: newPolicyVersion(1), workerId: 'trainer-1', state: 'candidate' });
      expect((await store.listSamples({ turnId: 'a' }))[0]?.status).toBe('trained');
      const versions = await store.listPolicyVersions();
      expect(versions.map((entry) => [entry.version, entry.state, entry.active])).toEqual([[0, 'active', true], [1, 'candidate', false]]);
      expect(await store.trainingSummary()).toMatchObject({ steps: 1, activeVersion: 0, latestVersion: 1 });
    });

    it('refuses a step whose samples are gone (erased while it trained), writing nothing', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.claimSamplesForTraining({ limit: 2, leaseMs: 60_000, now: 10_000, workerId: 'trainer-1' });
      await expectStoreError(store.commitTrainingStep({ step: step(1, ['sample-a', 'sample-gone']), version: newPolicyVersion(1), workerId: 'trainer-1' }));
      expect((await store.listSamples({ turnId: 'a' }))[0]?.status).toBe('ready');
      expect((await store.listPolicyVersions()).map((entry) => entry.version)).toEqual([0]);
      expect(await store.listTrainingSteps()).toEqual([]);
    });

    it('writes nothing when a commit repeats a step or a version', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.commitTrainingStep({ step: step(1, ['sample-a']), version: newPolicyVersion(1), workerId: 'trainer-1' });
      await expectStoreError(store.commitTrainingStep({ step: step(1, ['sample-b']), version: newPolicyVersion(2, { step: 1 }), workerId: 'trainer-1' }));
      await expectStoreError(store.commitTrainingStep({ step: { ...step(2, ['sample-b']), policyVersion: 1 }, version: newPolicyVersion(1), workerId: 'trainer-1' }));
      expect((await store.listSamples({ turnId: 'b' }))[0]?.status).toBe('ready');
      expect((await store.listPolicyVersions()).map((entry) => entry.version)).toEqual([0, 1]);
      expect((await store.listTrainingSteps()).map((entry) => entry.step)).toEqual([1]);
    });
  });
}
