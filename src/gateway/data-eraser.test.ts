import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { newPolicyVersion, newTurn, sample, trainingMetrics } from '../stores/testing/record-fixtures.js';
import { createDataEraser, type OnDeleteAction } from './data-eraser.js';
import type { PolicyControl, TrainingControl } from './policy-control.js';
import { createRetentionSchedule } from './retention-schedule.js';

const dayMs = 24 * 60 * 60 * 1000;

/** Serving is the store's activation; a training step trains every ready sample into the next version, from the active one. */
function policiesOver(store: RecordStore): PolicyControl & { steps: number; paused: boolean; stepping: boolean; training: TrainingControl } {
  const control = {
    steps: 0,
    paused: false,
    stepping: false,
    async activate(version: number) {
      await store.activatePolicyVersion(version, 50_000);
    },
    training: {
      pause() {
        control.paused = true;
      },
      resume() {
        control.paused = false;
      },
      status: () => ({ paused: control.paused, training: control.stepping, trainingVersion: 0, samplesDroppedStale: 0, failedSteps: 0, trainEvery: 1 }),
      trainNow: async () => {
        const claimed = await store.claimSamplesForTraining({ limit: 10, leaseMs: 1_000, now: 60_000, workerId: 'trainer' });
        const summary = await store.trainingSummary();
        const version = (summary.latestVersion ?? 0) + 1;
        const step = await store.commitTrainingStep({
          step: { step: version, policyVersion: version, trainedSampleIds: claimed.map((entry) => entry.id), metrics: trainingMetrics, checkpoint: null, startedAt: 60_000, endedAt: 60_100 },
          version: newPolicyVersion(version, { parent: summary.activeVersion }),
          workerId: 'trainer',
        });
        control.steps += 1;
        return { kind: 'trained' as const, step, samplesDropped: 0 };
      },
    },
  };
  return control;
}

describe('createDataEraser', () => {
  let store: RecordStore;

  beforeEach(async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
    const record = async (session: string, turn: string, startedAt: number) => {
      await store.upsertSession({ id: session, tenant: null, user: null, at: 100 });
      await store.recordTurn(newTurn(turn, { sessionId: session, timings: { startedAt, firstTokenAt: null, endedAt: startedAt } }));
      await store.recordSample(sample(`${turn}-sample`, turn, { policyVersion: 0 }));
    };
    const policies = policiesOver(store);
    // Version 1 trains on a kept turn; version 2, from 1, on the erased session's turn and another kept one.
    await record('kept', 'kept-1', 40 * dayMs);
    await policies.training.trainNow();
    await record('gone', 'gone-1', 1_000);
    await record('kept', 'kept-2', 40 * dayMs);
    await policies.training.trainNow();
  });

  afterEach(async () => {
    await store.close();
  });

  const eraserOf = (onDelete: OnDeleteAction, policies = policiesOver(store)) => ({ eraser: createDataEraser({ store, onDelete, policies, now: () => 90 * dayMs, logger: silentLogger }), policies });

  it('mark: names the versions and leaves serving alone', async () => {
    const { eraser } = eraserOf('mark');
    const result = await eraser.erase({ kind: 'session', sessionId: 'gone' });
    expect(result.erased.turns).toBe(1);
    expect(result.affectedVersions).toEqual([2]);
    expect(result.action).toEqual({ onDelete: 'mark', activated: null, retired: [], requeued: 0, retrainedVersion: null });
    expect((await store.trainingSummary()).activeVersion).toBe(2);
    expect(result.eventsErased).toBeNull();
  });

  it('retire: serving moves back to the newest untouched version and the tainted ones are retired', async () => {
    const { eraser } = eraserOf('retire');
    const result = await eraser.erase({ kind: 'session', sessionId: 'gone' });
    expect(result.action).toMatchObject({ activated: 1, retired: [2] });
    expect((await store.trainingSummary()).activeVersion).toBe(1);
    expect(await store.listTaintedVersions()).toEqual([{ version: 2, erasedSamples: 1, markedAt: 90 * dayMs, retiredAt: 90 * dayMs }]);
    expect((await store.listPolicyVersions()).find((entry) => entry.version === 2)).toMatchObject({ state: 'retired', stateReason: 'its lineage holds samples of erased data' });
    expect((await store.listPolicyVersions()).find((entry) => entry.version === 1)).toMatchObject({ state: 'active' });
  });

  it('retrain: retires, then trains from the untouched version on the samples that remain, and serves a version whose lineage holds no erased sample', async () => {
    const { eraser, policies } = eraserOf('retrain');
    const result = await eraser.erase({ kind: 'session', sessionId: 'gone' });
    expect(result.action).toEqual({ onDelete: 'retrain', activated: 1, retired: [2], requeued: 1, retrainedVersion: 3 });
    const served = (await store.trainingSummary()).activeVersion ?? 0;
    expect(served).toBe(result.action.retrainedVersion);
    const versions = await store.listPolicyVersions();
    expect(versions.find((entry) => entry.version === served)?.parent).toBe(1);
    expect(await store.listLineage(served)).toEqual([{ sampleId: 'kept-2-sample', erased: false }]);
    expect(policies.steps).toBe(1);
  });

  it('waits for a training step in flight and holds training during the erasure, then resumes it', async () => {
    const { eraser, policies } = eraserOf('mark');
    policies.stepping = true;
    let erased = false;
    const erasure = eraser.erase({ kind: 'session', sessionId: 'gone' }).then(() => {
      erased = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(erased).toBe(false);
    expect(policies.paused).toBe(true);
    policies.stepping = false;
    await erasure;
    expect(policies.paused).toBe(false);
  });

  it('retention erases, on its schedule\'s clock, the turns older than the days kept and nothing newer', async () => {
    const { eraser } = eraserOf('mark');
    let now = 20 * dayMs;
    const retention = createRetentionSchedule({ eraser, retainDays: 10, intervalMs: 60_000, now: () => now, logger: silentLogger });
    expect((await retention.runOnce()).erased.turns).toBe(1);
    expect(await store.getTurn('gone-1')).toBeNull();
    expect(await store.getTurn('kept-1')).not.toBeNull();
    now = 45 * dayMs;
    expect((await retention.runOnce()).erased.turns).toBe(0);
    now = 51 * dayMs;
    expect((await retention.runOnce()).erased).toMatchObject({ turns: 2, sessions: 1 });
    await retention.close();
  });
});
