import { runArtifactStoreContract } from '../artifact-store.contract.js';
import { createMemoryArtifactStore } from './create-memory-artifact-store.js';
import type { MemoryArtifactBackend } from './create-memory-artifact-store.js';

runArtifactStoreContract({
  name: 'memory',
  async createFixture() {
    const backend: MemoryArtifactBackend = new Map();
    return { openStore: async () => createMemoryArtifactStore({ backend }), destroy: async () => {} };
  },
});
