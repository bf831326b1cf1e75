/**
 * The `ArtifactStore` seam: where policy artifacts (a PEFT LoRA adapter's `adapter_config.json` +
 * `adapter_model.safetensors`, or full weights) live so that every process reaches them, in
 * distributed mode without an assumed shared disk. Implementations: in-memory (one process) and
 * the NATS object store. Every implementation runs `runArtifactStoreContract` from
 * `src/buses/artifact-store.contract.ts`.
 *
 * Contract:
 * - A version is all or nothing: `getArtifact` returns every file of a completed put, or null;
 *   a put that crashed half-way is invisible and may simply be repeated.
 * - A completed version is immutable: putting it again with identical files is a no-op (a retry
 *   whose answer was lost), with different files a `ClawrlError('invalid_request')`.
 * - Bytes are copied on the way in and out: callers may reuse their buffers.
 */
import type { PolicyVersion } from './inference-engine.js';

/** An artifact's files by flat file name (`adapter_model.safetensors`). */
export type ArtifactFiles = Record<string, Uint8Array>;

/** File names are flat: letters, digits, `.`, `_` and `-`, not starting with a dot. */
export const artifactFileNamePattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export interface ArtifactStore {
  /** Stores a version's files; resolves once every file is durably stored. At least one file. */
  putArtifact(version: PolicyVersion, files: ArtifactFiles): Promise<void>;
  /** The files of a completed version, or null when there is none. */
  getArtifact(version: PolicyVersion): Promise<ArtifactFiles | null>;
  /** Every completed version, ascending. */
  listVersions(): Promise<PolicyVersion[]>;
  /** Releases the connection. Idempotent. */
  close(): Promise<void>;
}
