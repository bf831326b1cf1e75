import { judgeModelOfSingleAnswers } from './judge-model.js';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../spec/logger.js';
import type { NewTurn } from '../spec/records.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createPrmJudge } from './create-prm-judge.js';
import { createRulesJudge, defaultRulesJudgeSpec } from './create-rules-judge.js';
import { rejudgeTurns } from './rejudge-turns.js';

function turnOf(id: string, startedAt: number): NewTurn {
  return {
    id,
    sessionId: 's1',
    type: 'main',
    status: 'completed',
    trainable: true,
    tenant: null, user: null,
    model: 'policy',
    policyVersion: 0,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1],
    responseTokenIds: [2],
    logprobs: [-1],
    response: { role: 'assistant', content: 'hello' },
    finishReason: 'stop',
    timings: { startedAt, firstTokenAt: null, endedAt: startedAt + 1 },
    error: null,
    replyKey: null,
  };
}

describe('rejudgeTurns', () => {
  it('adds a second judge identity beside the first, since a time, skipping turns it already judged', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    for (const [id, startedAt] of [['old', 100], ['new', 500], ['unlinked', 600]] as const) await store.recordTurn(turnOf(id, startedAt));
    await store.linkNextState('old', [{ role: 'user', content: 'thanks' }], 200);
    await store.linkNextState('new', [{ role: 'user', content: 'thanks' }], 600);
    await store.recordJudgement({
      turnId: 'new',
      judge: 'rules',
      ...{ judgeModel: 'rules:default', promptVersion: createRulesJudge(defaultRulesJudgeSpec).promptVersion },
      score: 1,
      votes: [],
      hint: null,
      hintCandidates: [],
      hintSelection: null,
      latencyMs: 1,
      createdAt: 1,
    });
    let calls = 0;
    const prm = createPrmJudge({
      judgeId: 'openai',
      modelName: 'other-judge',
      model: judgeModelOfSingleAnswers(async () => {
        calls += 1;
        return 'hmm \\boxed{-1}';
      }),
    });
    const options = { store, wantHint: false, now: () => 9_000, logger: silentLogger };
    expect(await rejudgeTurns({ ...options, judge: prm, since: 400 })).toEqual({ judged: 1, skipped: 0, failed: 0 });
    expect(calls).toBe(3);
    expect((await store.listJudgements('new')).map((judgement) => [judgement.judge, judgement.score])).toEqual([
      ['rules', 1],
      ['openai', -1],
    ]);
    expect(await store.listJudgements('old')).toEqual([]);
    expect(await rejudgeTurns({ ...options, judge: prm })).toEqual({ judged: 1, skipped: 1, failed: 0 });
    expect(await rejudgeTurns({ ...options, judge: createRulesJudge(defaultRulesJudgeSpec) })).toEqual({ judged: 1, skipped: 1, failed: 0 });
    const failing = createPrmJudge({ judgeId: 'openai', modelName: 'down', model: async () => Promise.reject(new Error('offline')) });
    expect(await rejudgeTurns({ ...options, judge: failing })).toEqual({ judged: 0, skipped: 0, failed: 2 });
    await store.close();
  });
});
