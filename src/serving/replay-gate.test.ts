import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleEngine } from '../engines/openai-compatible/create-openai-compatible-engine.js';
import { startFakeVllmServer } from '../engines/testing/fake-vllm-server.js';
import { createRulesJudge } from '../judge/create-rules-judge.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { newTurn } from '../stores/testing/record-fixtures.js';
import { runReplayGate } from './replay-gate.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the replay gate', () => {
  it('replays the newest held-out sessions that have a turn to judge, past newer ones that have none yet', async () => {
    const server = await startFakeVllmServer();
    const engine = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000 });
    const store = createSqliteRecordStore({ path: ':memory:' });
    cleanups.push(async () => {
      await engine.close();
      await server.close();
      await store.close();
    });
    let at = 1_000;
    const record = async (sessionId: string, turnId: string, nextState: string | null) => {
      at += 1_000;
      await store.upsertSession({ id: sessionId, tenant: null, user: null, at });
      await store.recordTurn(newTurn(turnId, { sessionId, timings: { startedAt: at, firstTokenAt: at + 1, endedAt: at + 2 } }));
      if (nextState !== null) await store.linkNextState(turnId, [{ role: 'user', content: nextState }], at + 3);
    };
    // Two older conversations with a next state, then more newer one-off requests than the gate replays sessions.
    await record('older-a', 'a1', 'thanks');
    await record('older-b', 'b1', 'thanks');
    for (let index = 0; index < 5; index += 1) await record(`one-off-${index}`, `o${index}`, null);
    const judge = createRulesJudge({ name: 'thanks', rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'thank', expect: true } }], score: 1 }] });
    const evidence = await runReplayGate({ store, engine, judge, now: () => at, heldOutShare: 1, sessions: 2 }, { candidate: 0, incumbent: 0 });
    expect(evidence.items.map((item) => item.sessionId).sort()).toEqual(['older-a', 'older-b']);
    expect(evidence).toMatchObject({ sessions: 2, turns: 2, heldOut: true });
    // Replayed several at once, the evidence lists the same turns in the same order.
    const together = await runReplayGate({ store, engine, judge, now: () => at, heldOutShare: 1, sessions: 7, concurrency: 4 }, { candidate: 0, incumbent: 0 });
    const alone = await runReplayGate({ store, engine, judge, now: () => at, heldOutShare: 1, sessions: 7, concurrency: 1 }, { candidate: 0, incumbent: 0 });
    expect(together.items.map((item) => item.turnId)).toEqual(alone.items.map((item) => item.turnId));
    expect(together.items.map((item) => item.turnId)).toEqual(['b1', 'a1']);
  });
});
