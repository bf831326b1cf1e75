import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { runTrainingEngineContract } from '../training-engine.contract.js';
import { createLocalTrainingEngine } from './create-local-training-engine.js';
import { createTinyModelFolder } from './testing/create-tiny-model-folder.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
const checkpoints = mkdtempSync(path.join(tmpdir(), 'clawrl-checkpoints-'));
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
  rmSync(checkpoints, { recursive: true, force: true });
});

for (const trainParams of ['lora', 'full'] as const) {
  runTrainingEngineContract({
    name: `local trainer worker (${trainParams})`,
    createEngine: () =>
      createLocalTrainingEngine({
        modelDirectory: folder,
        modelId: 'tiny',
        checkpointDirectory: path.join(checkpoints, trainParams),
        trainParams,
        lora: { rank: 4, alpha: 8 },
        optimizer: { learningRate: 1e-2 },
        workerUrl,
      }),
    promptTokenIds: [3, 14, 15, 92, 65],
    responseTokenIds: [35, 89, 79, 32],
    lineages: true,
  });
}
