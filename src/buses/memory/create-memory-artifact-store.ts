/**
 * The one-process `ArtifactStore`: policy artifacts in a Map. Stores created over the same
 * `backend` share their versions, so a store closed and re-opened over it keeps them; nothing
 * outlives the process (one-process mode keeps its durable weights on the local disk instead).
 */
import type { ArtifactFiles, ArtifactStore } from '../../spec/artifact-store.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import { checkArtifactFiles, checkArtifactVersion, checkSameArtifact, digestArtifactFiles } from '../artifact-checks.js';

/** Completed versions by number; share one between stores to model processes sharing a server. */
export type MemoryArtifactBackend = Map<PolicyVersion, ArtifactFiles>;

export interface MemoryArtifactStoreOptions {
  /** Default a new private one. */
  backend?: MemoryArtifactBackend;
}

export function createMemoryArtifactStore(options: MemoryArtifactStoreOptions = {}): ArtifactStore {
  const backend: MemoryArtifactBackend = options.backend ?? new Map();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new ClawrlError('internal_error', 'the artifact store is closed');
  }

  return {
    async putArtifact(version, files) {
      assertOpen();
      checkArtifactVersion(version);
      checkArtifactFiles(files);
      const stored = backend.get(version);
      if (stored) {
        checkSameArtifact(version, digestArtifactFiles(stored), digestArtifactFiles(files));
        return;
      }
      backend.set(version, copyFiles(files));
    },
    async getArtifact(version) {
      assertOpen();
      checkArtifactVersion(version);
      const stored = backend.get(version);
      return stored ? copyFiles(stored) : null;
    },
    async listVersions() {
      assertOpen();
      return [...backend.keys()].sort((left, right) => left - right);
    },
    async close() {
      closed = true;
    },
  };
}

function copyFiles(files: ArtifactFiles): ArtifactFiles {
  return Object.fromEntries(Object.entries(files).map(([name, data]) => [name, data.slice()]));
}
