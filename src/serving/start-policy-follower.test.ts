import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventBus } from '../buses/memory/create-memory-event-bus.js';
import type { EventBus } from '../spec/event-bus.js';
import type { PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import { silentLogger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { serveActiveVersion, startPolicyFollower, type PolicyFollower } from './start-policy-follower.js';

async function recordVersion(store: RecordStore, version: PolicyVersion): Promise<void> {
  await store.recordPolicyVersion(
    {
      version,
      parent: version === 0 ? null : version - 1,
      kind: version === 0 ? 'base' : 'adapter',
      files: version === 0 ? {} : { 'adapter_model.safetensors': new Uint8Array([version]) },
      step: version === 0 ? null : version,
      samples: 0,
      metrics: null,
      createdAt: version,
    },
    { activate: true },
  );
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('startPolicyFollower', () => {
  let store: RecordStore;
  let bus: EventBus;
  let follower: PolicyFollower | undefined;

  afterEach(async () => {
    await follower?.close();
    await bus.close();
    await store.close();
  });

  it('follows the store’s active version on every policy-published event', async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    bus = createMemoryEventBus();
    await recordVersion(store, 0);
    const followed: PolicyVersion[] = [];
    follower = startPolicyFollower({ store, bus, consumer: 'gateway-a', follow: async (version) => void followed.push(version), logger: silentLogger, intervalMs: 3_600_000 });
    await recordVersion(store, 1);
    await bus.publish('policy-published', { version: 1 });
    await until(() => followed.length === 1);
    // A rollback elsewhere: the event names another version, the store says what is active.
    await store.activatePolicyVersion(0, 10);
    await bus.publish('policy-published', { version: 0 });
    await until(() => followed.length === 2);
    expect(followed).toEqual([1, 0]);
  });

  it('checks the store without events, so a lost event only delays the switch', async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    bus = createMemoryEventBus();
    await recordVersion(store, 0);
    await recordVersion(store, 1);
    const followed: PolicyVersion[] = [];
    follower = startPolicyFollower({ store, bus, consumer: 'gateway-a', follow: async (version) => void followed.push(version), logger: silentLogger, intervalMs: 10 });
    await until(() => followed.length >= 2);
    expect(new Set(followed)).toEqual(new Set([1]));
  });

  it('serveActiveVersion loads a version only when it is not served yet', async () => {
    const loaded: PolicyVersion[] = [];
    const serving = {
      servedVersion: 0,
      artifactOf: async (version: PolicyVersion): Promise<PolicyArtifact> => ({ version, kind: 'adapter', files: {} }),
      async serve(artifact: PolicyArtifact) {
        loaded.push(artifact.version);
        serving.servedVersion = artifact.version;
      },
    };
    const follow = serveActiveVersion(serving);
    await follow(0);
    await follow(2);
    await follow(2);
    expect(loaded).toEqual([2]);
  });
});
