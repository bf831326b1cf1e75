/**
 * The `PolicyRegistry` contract (`spec/policy-registry.ts`): versions recorded once, their
 * artifacts, and activation as the one pointer serving follows (a rollback is an activation).
 * Versions a step commits are in the training queue's contract. `runRecordStoreContract` runs it,
 * so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
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
  });
}
