import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import type { NewTurn } from '../../spec/records.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { commandSchemas } from '../configuration/configuration-schema.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import type { JudgeCommandConfiguration } from '../commands/judge-command.js';
import { judgeRunsInThread, startJudgeThread } from './start-judge-thread.js';

// The thread runs compiled code, like the local engine's workers.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'cli', 'wiring', 'judge-thread-worker.js'), import.meta.url);

function configurationFor(data: string, overrides: Partial<JudgeCommandConfiguration> = {}): JudgeCommandConfiguration {
  const flags = { data, judge: 'rules', method: 'rl', upstreamTimeout: '10000' };
  return { ...resolveConfiguration(commandSchemas.judge, { flags, file: {}, environment: {} }).configuration, ...overrides };
}

function turnOf(id: string): NewTurn {
  return {
    id,
    sessionId: 'session',
    type: 'main',
    status: 'completed',
    trainable: true,
    tenant: null, user: null,
    model: 'policy',
    policyVersion: 0,
    messages: [{ role: 'user', content: 'What is 2+3?' }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1, 2, 3],
    responseTokenIds: [4, 5],
    logprobs: [-0.5, -1],
    response: { role: 'assistant', content: 'It is 5.' },
    finishReason: 'stop',
    timings: { startedAt: 1_000, firstTokenAt: 1_001, endedAt: 1_002 },
    error: null,
    replyKey: null,
  };
}

describe('judgeRunsInThread', () => {
  it('moves the judge off the HTTP thread unless it needs the embedded engine', () => {
    expect(judgeRunsInThread({ engine: 'vllm', judge: 'policy', method: 'combine' })).toBe(true);
    expect(judgeRunsInThread({ engine: 'local', judge: 'rules', method: 'rl' })).toBe(true);
    expect(judgeRunsInThread({ engine: 'local', judge: 'policy', method: 'rl' })).toBe(false);
    expect(judgeRunsInThread({ engine: 'local', judge: 'rules', method: 'opd' })).toBe(false);
  });
});

describe('startJudgeThread', () => {
  let directory: string;

  beforeEach(() => {
    if (!existsSync(workerUrl)) throw new Error(`${workerUrl.pathname} is missing: run \`npm run build\` first`);
    directory = mkdtempSync(path.join(tmpdir(), 'clawrl-judge-thread-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('judges turns queued in the shared store from its own thread and closes cleanly', async () => {
    const store = createSqliteRecordStore({ path: path.join(directory, 'clawrl.db') });
    try {
      await store.upsertSession({ id: 'session', tenant: null, user: null, at: 1_000 });
      await store.recordTurn(turnOf('turn-1'));
      await store.linkNextState('turn-1', [{ role: 'user', content: 'Thanks, that is right!' }], 2_000);
      const judge = await startJudgeThread(configurationFor(directory), { logger: silentLogger, workerUrl });
      try {
        let samples = await store.listSamples({ turnId: 'turn-1' });
        for (let attempt = 0; samples.length === 0 && attempt < 100; attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          samples = await store.listSamples({ turnId: 'turn-1' });
        }
        expect(samples).toHaveLength(1);
        expect((await store.listJudgements('turn-1'))[0]?.judge).toBe('rules');
      } finally {
        await judge.close();
      }
      // Closed: the queue is empty and nothing holds the store.
      expect((await store.counts()).judging.pending).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('rejects with the thread start error, code and message kept', async () => {
    const errors: string[] = [];
    const logger: Logger = { ...silentLogger, error: (message) => errors.push(message) };
    const started = startJudgeThread(configurationFor(directory, { store: 'postgres' }), { logger, workerUrl });
    const error: unknown = await started.then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(ClawrlError.isInstance(error)).toBe(true);
    expect((error as ClawrlError).code).toBe('configuration_error');
    expect((error as ClawrlError).message).toMatch(/^the judge thread could not start: --store postgres needs --store-url/);
    expect(errors).toEqual([]);
  });
});
