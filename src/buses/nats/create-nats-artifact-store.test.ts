import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArtifactStoreContract } from '../artifact-store.contract.js';
import { createNatsArtifactStore } from './create-nats-artifact-store.js';
import { connectToTestNats, testNatsUrl, uniqueTestName } from './testing/nats-test-server.js';
import type { NatsTestConnection } from './testing/nats-test-server.js';

let admin: NatsTestConnection;

beforeAll(async () => {
  admin = await connectToTestNats();
});

afterAll(async () => {
  await admin?.connection.close();
});

runArtifactStoreContract({
  name: 'nats',
  async createFixture() {
    const bucket = uniqueTestName('clawrl_test');
    return {
      openStore: () => createNatsArtifactStore({ servers: testNatsUrl, bucket }),
      // The object store keeps bucket `b` in the stream `OBJ_b`.
      destroy: async () => {
        await admin.manager.streams.delete(`OBJ_${bucket}`).catch(() => false);
      },
    };
  },
});

describe('nats artifact store', () => {
  it('hides a version whose put died before its manifest was written', async () => {
    const bucket = uniqueTestName('clawrl_test');
    const store = await createNatsArtifactStore({ servers: testNatsUrl, bucket });
    try {
      const { Objm } = await import('@nats-io/obj');
      const raw = await new Objm(admin.connection).open(bucket);
      await raw.putBlob({ name: 'policy-4/adapter_model.safetensors' }, new Uint8Array([1, 2, 3]));
      expect(await store.listVersions()).toEqual([]);
      expect(await store.getArtifact(4)).toBeNull();
      await store.putArtifact(4, { 'adapter_model.safetensors': new Uint8Array([4, 5]) });
      expect(await store.getArtifact(4)).toEqual({ 'adapter_model.safetensors': new Uint8Array([4, 5]) });
    } finally {
      await store.close();
      await admin.manager.streams.delete(`OBJ_${bucket}`);
    }
  });

  it('fails with a clear, retryable error when NATS is unreachable', async () => {
    await expect(createNatsArtifactStore({ servers: 'nats://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'upstream_error',
      retryable: true,
      message: expect.stringMatching(/cannot reach NATS at nats:\/\/127\.0\.0\.1:1/),
    });
  });
});
