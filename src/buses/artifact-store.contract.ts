/**
 * The behaviour every `ArtifactStore` implementation must show (the contract in
 * `src/spec/artifact-store.ts`), through the seam only.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../spec/artifact-store.js';
import { ClawrlError } from '../spec/clawrl-error.js';

/** One isolated backend per test: every store it opens sees the same versions. */
export interface ArtifactStoreFixture {
  openStore(): Promise<ArtifactStore>;
  /** Runs after every store of the test is closed. */
  destroy(): Promise<void>;
}

export interface ArtifactStoreContractOptions {
  name: string;
  createFixture: () => Promise<ArtifactStoreFixture>;
}

const encoder = new TextEncoder();

function adapter(seed: number): Record<string, Uint8Array> {
  // Just over one 128 KiB object-store chunk, so multi-chunk objects are exercised.
  const weights = new Uint8Array(140_000);
  for (let index = 0; index < weights.length; index += 1) weights[index] = (index * 31 + seed) % 251;
  return {
    'adapter_config.json': encoder.encode(JSON.stringify({ r: 16, lora_alpha: 32, seed })),
    'adapter_model.safetensors': weights,
  };
}

/** Files by name as length and SHA-256: deep equality over typed arrays is slow, and a digest says the same. */
function fingerprint(files: Record<string, Uint8Array> | null): Record<string, string> | null {
  if (!files) return null;
  return Object.fromEntries(
    Object.entries(files).map(([name, data]) => {
      expect(data).toBeInstanceOf(Uint8Array);
      return [name, `${data.byteLength}:${createHash('sha256').update(data).digest('hex')}`];
    }),
  );
}

async function invalidRequest(promise: Promise<unknown>): Promise<void> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection, but the promise resolved'),
    (rejection: unknown) => rejection,
  );
  expect(ClawrlError.isInstance(error), `expected a ClawrlError, got ${String(error)}`).toBe(true);
  expect((error as ClawrlError).code).toBe('invalid_request');
}

export function runArtifactStoreContract(options: ArtifactStoreContractOptions): void {
  describe(`ArtifactStore contract: ${options.name}`, () => {
    let fixture: ArtifactStoreFixture;
    let stores: ArtifactStore[];

    beforeEach(async () => {
      stores = [];
      fixture = await options.createFixture();
    });

    afterEach(async () => {
      await Promise.all(stores.map((store) => store.close()));
      await fixture.destroy();
    });

    async function openStore(): Promise<ArtifactStore> {
      const store = await fixture.openStore();
      stores.push(store);
      return store;
    }

    it('returns exactly the files that were put, and null for an unknown version', async () => {
      const store = await openStore();
      expect(await store.getArtifact(1)).toBeNull();
      const files = { ...adapter(1), 'empty.bin': new Uint8Array(0) };
      await store.putArtifact(1, files);
      expect(fingerprint(await store.getArtifact(1))).toEqual(fingerprint(files));
      expect(await store.getArtifact(2)).toBeNull();
    });

    it('lists completed versions in numeric order', async () => {
      const store = await openStore();
      expect(await store.listVersions()).toEqual([]);
      for (const version of [10, 2, 9, 0]) await store.putArtifact(version, adapter(version));
      expect(await store.listVersions()).toEqual([0, 2, 9, 10]);
    });

    it('keeps versions immutable: an identical put is a no-op, a different one is rejected', async () => {
      const store = await openStore();
      await store.putArtifact(3, adapter(3));
      await store.putArtifact(3, adapter(3));
      await invalidRequest(store.putArtifact(3, adapter(4)));
      await invalidRequest(store.putArtifact(3, { 'adapter_config.json': adapter(3)['adapter_config.json'] ?? new Uint8Array() }));
      expect(fingerprint(await store.getArtifact(3))).toEqual(fingerprint(adapter(3)));
    });

    it('copies bytes in and out', async () => {
      const store = await openStore();
      const files = adapter(5);
      await store.putArtifact(5, files);
      files['adapter_model.safetensors']?.fill(0);
      const first = await store.getArtifact(5);
      first?.['adapter_model.safetensors']?.fill(0);
      expect(fingerprint(await store.getArtifact(5))).toEqual(fingerprint(adapter(5)));
    });

    it('rejects bad versions, no files and path-like file names', async () => {
      const store = await openStore();
      await invalidRequest(store.putArtifact(-1, adapter(1)));
      await invalidRequest(store.putArtifact(1.5, adapter(1)));
      await invalidRequest(store.putArtifact(1, {}));
      await invalidRequest(store.putArtifact(1, { '../escape': new Uint8Array(1) }));
      await invalidRequest(store.putArtifact(1, { 'nested/file.bin': new Uint8Array(1) }));
      expect(await store.listVersions()).toEqual([]);
    });

    it('keeps versions across store instances, and closes idempotently', async () => {
      const writer = await openStore();
      await writer.putArtifact(7, adapter(7));
      await writer.close();
      await writer.close();
      await expect(writer.listVersions()).rejects.toThrow(/closed/);
      const reader = await openStore();
      expect(await reader.listVersions()).toEqual([7]);
      expect(fingerprint(await reader.getArtifact(7))).toEqual(fingerprint(adapter(7)));
    });
  });
}
