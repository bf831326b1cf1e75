/**
 * The distributed `ArtifactStore` over a NATS object store bucket (file storage), so a policy
 * published by the trainer reaches every gateway without a shared disk.
 *
 * Layout: each file is the object `policy-<version>/<file name>`; the object
 * `manifest/<version>` lists the files with their sizes and SHA-256 and is written last. A
 * version exists exactly when its manifest does, which makes a put all or nothing: a trainer
 * that dies half-way leaves unlisted objects that the retried put overwrites. One writer per
 * version (the trainer) is assumed; reads check every file against the manifest.
 */
import { StorageType } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { ObjectStore } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import type { ArtifactFiles, ArtifactStore } from '../../spec/artifact-store.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import { checkArtifactFiles, checkArtifactVersion, checkSameArtifact, digestArtifactFiles } from '../artifact-checks.js';
import type { ArtifactFileDigest } from '../artifact-checks.js';
import { messageOf } from './nats-event-stream.js';

export interface NatsArtifactStoreOptions {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** Object store bucket (letters, digits, `_`, `-`). Default `clawrl-policies`. */
  bucket?: string;
  /** The connection name shown in NATS monitoring. Default `clawrl`. */
  connectionName?: string;
}

const manifestPrefix = 'manifest/';

const manifestSchema = z.object({
  version: z.number().int().nonnegative(),
  files: z.record(z.string(), z.object({ size: z.number().int().nonnegative(), sha256: z.string() })),
});

type Manifest = z.infer<typeof manifestSchema>;

/** Connects and creates (or opens) the bucket. Fails with a retryable `ClawrlError` when NATS is unreachable. */
export async function createNatsArtifactStore(options: NatsArtifactStoreOptions): Promise<ArtifactStore> {
  const bucketName = options.bucket ?? 'clawrl-policies';
  let connection: NatsConnection;
  try {
    connection = await connect({ servers: options.servers, name: options.connectionName ?? 'clawrl', maxReconnectAttempts: -1 });
  } catch (error) {
    throw natsError(`cannot reach NATS at ${String(options.servers)}`, error);
  }
  let bucket: ObjectStore;
  try {
    bucket = await new Objm(connection).create(bucketName, { storage: StorageType.File });
  } catch (error) {
    await connection.close();
    throw new ClawrlError('configuration_error', `cannot open object store bucket "${bucketName}": ${messageOf(error)}`, { cause: error });
  }
  let closed: Promise<void> | null = null;

  function assertOpen(): void {
    if (closed) throw new ClawrlError('internal_error', 'the artifact store is closed');
  }

  async function readManifest(version: PolicyVersion): Promise<Manifest | null> {
    const data = await bucket.getBlob(`${manifestPrefix}${version}`);
    if (!data) return null;
    const parsed = manifestSchema.safeParse(parseJson(data));
    if (!parsed.success || parsed.data.version !== version) {
      throw new ClawrlError('upstream_error', `the manifest of policy version ${version} in bucket "${bucketName}" is malformed`);
    }
    return parsed.data;
  }

  async function guarded<T>(what: string, action: () => Promise<T>): Promise<T> {
    assertOpen();
    try {
      return await action();
    } catch (error) {
      if (ClawrlError.isInstance(error)) throw error;
      throw natsError(what, error);
    }
  }

  return {
    putArtifact(version, files) {
      return guarded(`cannot store policy version ${version}`, async () => {
        checkArtifactVersion(version);
        checkArtifactFiles(files);
        const digests = digestArtifactFiles(files);
        const existing = await readManifest(version);
        if (existing) {
          checkSameArtifact(version, existing.files, digests);
          return;
        }
        for (const [name, data] of Object.entries(files)) {
          await bucket.putBlob({ name: `${fileObjectPrefix(version)}${name}` }, data);
        }
        const manifest: Manifest = { version, files: digests };
        await bucket.putBlob({ name: `${manifestPrefix}${version}` }, new TextEncoder().encode(JSON.stringify(manifest)));
      });
    },
    getArtifact(version) {
      return guarded(`cannot read policy version ${version}`, async () => {
        checkArtifactVersion(version);
        const manifest = await readManifest(version);
        if (!manifest) return null;
        const files: ArtifactFiles = {};
        for (const [name, expected] of Object.entries(manifest.files)) {
          const data = await bucket.getBlob(`${fileObjectPrefix(version)}${name}`);
          if (!data || !matches(data, name, expected)) {
            throw new ClawrlError('upstream_error', `file "${name}" of policy version ${version} is missing or differs from its manifest`);
          }
          // A plain Uint8Array copy: the client hands out Buffers that may share a pooled allocation.
          files[name] = new Uint8Array(data);
        }
        return files;
      });
    },
    listVersions() {
      return guarded('cannot list policy versions', async () => {
        const objects = await bucket.list();
        return objects
          .filter((info) => !info.deleted && info.name.startsWith(manifestPrefix))
          .map((info) => Number(info.name.slice(manifestPrefix.length)))
          .filter((version) => Number.isSafeInteger(version) && version >= 0)
          .sort((left, right) => left - right);
      });
    },
    close() {
      closed ??= connection.drain().catch(() => connection.close());
      return closed;
    },
  };
}

function fileObjectPrefix(version: PolicyVersion): string {
  return `policy-${version}/`;
}

function matches(data: Uint8Array, name: string, expected: ArtifactFileDigest): boolean {
  const actual = digestArtifactFiles({ [name]: data })[name];
  return actual?.size === expected.size && actual.sha256 === expected.sha256;
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

function natsError(what: string, error: unknown): ClawrlError {
  return new ClawrlError('upstream_error', `${what}: ${messageOf(error)}`, { cause: error, retryable: true });
}
