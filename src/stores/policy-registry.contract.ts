/**
 * The `PolicyRegistry` contract (`spec/policy-registry.ts`): versions recorded once, their
 * artifacts, and activation as the one pointer serving follows (a rollback is an activation).
 * Versions a step commits are in the training queue's contract. `runRecordStoreContract` runs it,
 * so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { PolicyGateEvidence } from '../spec/policy-version-state.js';
import type { RecordStore } from '../spec/record-store.js';
import { expectStoreError, newPolicyVersion } from './testing/record-fixtures.js';

export function runPolicyRegistryContract(getStore: () => RecordStore): void {
  describe('policy registry', () => {
    let store: RecordStore;
    const active = async () => (await store.listPolicyVersions()).map((entry) => [entry.version, entry.active]);

    beforeEach(() => {
      store = getStore();
    });

    it('records the base version active, once', async () => {
      expect(await store.trainingSummary()).toEqual({ steps: 0, lastStep: null, activeVersion: null, latestVersion: null });
      const base = await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      expect(base).toMatchObject({ version: 0, parent: null, kind: 'base', active: true, bytes: 0 });
      await expectStoreError(store.recordPolicyVersion(newPolicyVersion(0), { activate: false }));
      expect(await active()).toEqual([[0, true]]);
      expect(await store.trainingSummary()).toEqual({ steps: 0, lastStep: null, activeVersion: 0, latestVersion: 0 });
    });

    it('keeps an artifact per version and serves the latest activation: a rollback is an activation', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(1, { step: null }), { activate: false });
      expect(await active()).toEqual([[0, true], [1, false]]);
      expect(await store.getPolicyArtifact(1)).toEqual({ kind: 'adapter', files: newPolicyVersion(1).files });
      expect(await store.getPolicyArtifact(0)).toEqual({ kind: 'base', files: {} });
      expect(await store.getPolicyArtifact(9)).toBeNull();

      expect(await store.activatePolicyVersion(1, 7_000)).toBe(true);
      expect(await store.trainingSummary()).toMatchObject({ activeVersion: 1, latestVersion: 1 });
      expect(await store.activatePolicyVersion(0, 7_001)).toBe(true);
      expect(await store.activatePolicyVersion(42, 7_002)).toBe(false);
      expect(await active()).toEqual([[0, true], [1, false]]);
      expect(await store.trainingSummary()).toMatchObject({ activeVersion: 0, latestVersion: 1 });
    });

    it('gives each version a lifecycle state: the latest activation is active, the one it replaces retired or rolled back', async () => {
      const states = async () => (await store.listPolicyVersions()).map((entry) => [entry.version, entry.state, entry.stateReason]);
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(1, { step: null }), { activate: false });
      expect(await states()).toEqual([[0, 'active', 'activated'], [1, 'candidate', 'waiting for the gate']]);

      expect(await store.activatePolicyVersion(1, 8_000, { reason: 'the gate promoted it' })).toBe(true);
      expect(await states()).toEqual([[0, 'retired', 'superseded by version 1'], [1, 'active', 'the gate promoted it']]);
      expect(await store.activatePolicyVersion(0, 8_001, { reason: 'activated by a person' })).toBe(true);
      expect(await states()).toEqual([[0, 'active', 'activated by a person'], [1, 'rolled-back', 'rolled back to version 0']]);
      expect((await store.listPolicyVersions())[1]).toMatchObject({ stateChangedAt: 8_001, active: false });
    });

    it('sets any state with its reason and evidence, and never leaves serving without an active version', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(1, { step: null }), { activate: false });
      const gate = gateEvidence(1, 0);
      expect(await store.setPolicyVersionState(1, 'canary', { reason: 'passed the replay gate', at: 9_000, gate })).toBe(true);
      const canary = await store.listPolicyVersions().then((entries) => entries[1]);
      expect(canary).toMatchObject({ state: 'canary', stateReason: 'passed the replay gate', stateChangedAt: 9_000, gate, canary: null, active: false });

      // Evidence not given is kept; a new state replaces the reason.
      expect(await store.setPolicyVersionState(1, 'rolled-back', { reason: 'canary feedback fell', at: 9_001 })).toBe(true);
      expect((await store.listPolicyVersions())[1]).toMatchObject({ state: 'rolled-back', stateReason: 'canary feedback fell', gate });
      expect(await store.setPolicyVersionState(7, 'retired', { reason: 'erased', at: 9_002 })).toBe(false);
      await expect(store.setPolicyVersionState(0, 'retired', { reason: 'erased', at: 9_003 })).rejects.toMatchObject({ code: 'invalid_request' });
      expect(await store.trainingSummary()).toMatchObject({ activeVersion: 0 });

      expect(await store.setPolicyVersionState(1, 'active', { reason: 'the canary held', at: 9_004 })).toBe(true);
      expect((await store.listPolicyVersions()).map((entry) => [entry.state, entry.active])).toEqual([['retired', false], ['active', true]]);
      expect(await store.trainingSummary()).toMatchObject({ activeVersion: 1 });
    });

    it('keeps each user\'s lineage apart: its own active version, activations replace only its own, filtered lists and summaries', async () => {
      await store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(1, { parent: 0, user: 'acme/ann' }), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(2, { parent: 0, user: 'acme/bob' }), { activate: true });
      await store.recordPolicyVersion(newPolicyVersion(3, { parent: 1, user: 'acme/ann' }), { activate: true });
      const lineages = async () => (await store.listPolicyVersions()).map((entry) => [entry.version, entry.user, entry.active, entry.state]);
      expect(await lineages()).toEqual([
        [0, null, true, 'active'], [1, 'acme/ann', false, 'retired'], [2, 'acme/bob', true, 'active'], [3, 'acme/ann', true, 'active'],
      ]);
      // Rolling ann back touches neither bob's lineage nor the global one.
      expect(await store.activatePolicyVersion(1, 9_000)).toBe(true);
      expect(await lineages()).toEqual([
        [0, null, true, 'active'], [1, 'acme/ann', true, 'active'], [2, 'acme/bob', true, 'active'], [3, 'acme/ann', false, 'rolled-back'],
      ]);
      expect((await store.listPolicyVersions({ user: 'acme/ann' })).map((entry) => entry.version)).toEqual([1, 3]);
      expect((await store.listPolicyVersions({ user: null })).map((entry) => entry.version)).toEqual([0]);
      expect(await store.listPolicyVersions({ user: 'acme/nobody' })).toEqual([]);
      expect(await store.trainingSummary()).toMatchObject({ activeVersion: 0, latestVersion: 3 });
      expect(await store.trainingSummary({ user: 'acme/ann' })).toEqual({ steps: 0, lastStep: null, activeVersion: 1, latestVersion: 3 });
      expect(await store.trainingSummary({ user: 'acme/nobody' })).toEqual({ steps: 0, lastStep: null, activeVersion: null, latestVersion: null });
    });
  });
}

function gateEvidence(candidate: number, incumbent: number): PolicyGateEvidence {
  return {
    method: 'replay', candidate, incumbent, decision: 'promote', rule: 'sign test', reason: 'more wins', heldOut: true,
    sessions: 1, turns: 1, wins: 1, losses: 0, ties: 0, pValue: 0.5, candidateMeanScore: 1, incumbentMeanScore: 0,
    items: [{ turnId: 'turn-1', sessionId: 'session-a', candidate: 1, incumbent: 0, preferred: 'candidate' }],
    startedAt: 1, endedAt: 2,
  };
}
