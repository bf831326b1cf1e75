import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRecordStore } from '../wiring/open-record-store.js';
import { runSamplesExportCommand } from './samples-export-command.js';

describe('runSamplesExportCommand', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), 'clawrl-export-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('writes every sample as a JSON line with the turn tokens, optionally one status only and the turn text', async () => {
    const configuration = { data: path.join(directory, 'data'), store: 'sqlite' as const, storeUrl: undefined };
    const store = await openRecordStore(configuration);
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    await store.recordTurn({
      id: 't1',
      sessionId: 's1',
      type: 'main',
      status: 'completed',
      trainable: true,
      tenant: null, user: null,
      model: 'policy',
      policyVersion: 4,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
      promptTokenIds: [1, 2],
      responseTokenIds: [3, 4],
      logprobs: [-0.5, -1.5],
      response: { role: 'assistant', content: 'hello' },
      finishReason: 'stop',
      timings: { startedAt: 1, firstTokenAt: null, endedAt: 2 },
      error: null,
      replyKey: null,
    });
    const sample = {
      turnId: 't1',
      method: 'rl' as const,
      policyVersion: 4,
      judgementId: null,
      feedbackId: null,
      score: 1,
      hint: null,
      teacherLogprobs: null,
      support: null,
    };
    await store.recordSample({ ...sample, id: 'a', status: 'ready', dropReason: null, group: null, lossMask: [1, 1], distillationGaps: null, createdAt: 10 });
    await store.recordSample({
      ...sample, id: 'b', method: 'combine', status: 'ready', dropReason: null, score: -1, group: null, lossMask: [1, 1], distillationGaps: [0.25, -2], teacherLogprobs: [-0.25, -3.5],
      support: [[{ id: 7, studentLogprob: -0.5, teacherLogprob: -0.25, gap: 0.25, weight: 1 }], [{ id: 8, studentLogprob: -1.5, teacherLogprob: null, gap: null, weight: 1 }]], createdAt: 20,
    });
    await store.close();

    const out = path.join(directory, 'samples.jsonl');
    expect(await runSamplesExportCommand({ ...configuration, out, status: undefined, withTurns: false })).toBe(2);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { id: 'a', status: 'dropped', dropReason: 'superseded' },
      { id: 'b', status: 'ready', promptTokenIds: [1, 2], responseTokenIds: [3, 4], rolloutLogprobs: [-0.5, -1.5], policyVersion: 4,
        // What the judge measured, from which the trainer forms the advantages: the reward, the gaps, the support set's gaps and weights.
        method: 'combine', score: -1, distillationGaps: [0.25, -2], teacherLogprobs: [-0.25, -3.5], judgedAdvantages: null,
        support: [[{ id: 7, studentLogprob: -0.5, teacherLogprob: -0.25, gap: 0.25, weight: 1 }], [{ id: 8, studentLogprob: -1.5, teacherLogprob: null, gap: null, weight: 1 }]] },
    ]);
    expect(lines[1]).not.toHaveProperty('turn');
    const reopened = await openRecordStore(configuration);
    await reopened.linkNextState('t1', [{ role: 'user', content: 'thanks!' }], 3);
    await reopened.close();
    expect(await runSamplesExportCommand({ ...configuration, out, status: 'ready', withTurns: true })).toBe(1);
    const ready = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(ready).toHaveLength(1);
    expect(JSON.parse(ready[0] as string)).toMatchObject({
      id: 'b',
      turn: { messages: [{ role: 'user', content: 'hi' }], response: { role: 'assistant', content: 'hello' }, nextState: [{ role: 'user', content: 'thanks!' }] },
    });
    await expect(
      runSamplesExportCommand({ ...configuration, out: path.join(directory, 'missing', 'x.jsonl'), status: undefined, withTurns: false }),
    ).rejects.toMatchObject({ code: 'configuration_error' });
  });

  it('refuses a --data folder that holds no store, and creates nothing there', async () => {
    const out = path.join(directory, 'samples.jsonl');
    const missing = path.join(directory, 'not-the-data-folder');
    await expect(runSamplesExportCommand({ data: missing, store: 'sqlite', storeUrl: undefined, out, status: undefined, withTurns: false })).rejects.toMatchObject({
      code: 'configuration_error',
      param: 'data',
      message: expect.stringMatching(/^--data \S+ holds no clawrl store \(no clawrl\.db there\)/),
    });
    expect(existsSync(missing)).toBe(false);
    const empty = path.join(directory, 'empty');
    mkdirSync(empty);
    await expect(runSamplesExportCommand({ data: empty, store: 'sqlite', storeUrl: undefined, out, status: undefined, withTurns: false })).rejects.toMatchObject({
      param: 'data',
    });
    expect(existsSync(path.join(empty, 'clawrl.db'))).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});
