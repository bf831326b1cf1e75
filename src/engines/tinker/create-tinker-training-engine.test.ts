import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { runTrainingEngineContract } from '../training-engine.contract.js';
import { createTinyModelFolder } from '../local/testing/create-tiny-model-folder.js';
import { createTinkerClient } from './create-tinker-client.js';
import { createTinkerTrainingEngine } from './create-tinker-training-engine.js';
import { createTinkerTestServer, type TinkerTestServer } from './testing/create-tinker-test-server.js';

// The server's training clients are local trainer workers, which run compiled JavaScript.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
let server: TinkerTestServer;
beforeAll(async () => {
  server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl, loraAlpha: 8 });
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

runTrainingEngineContract({
  name: 'Tinker over the Tinker test server',
  createEngine: async () =>
    createTinkerTrainingEngine({
      client: await createTinkerClient({ url: server.url, apiKey: 'tml-test' }),
      baseModel: 'tiny',
      loraRank: 4,
      optimizer: { learningRate: 1e-2 },
      // Two clients for three lineages (the engine's own and two users'): a lineage both opens a client and takes one over.
      maxTrainingClients: 2,
    }),
  promptTokenIds: [3, 14, 15, 92, 65],
  responseTokenIds: [35, 89, 79, 32],
  lineages: true,
});
