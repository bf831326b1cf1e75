import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hintSystemPrompt } from '../core/judge-prompts.js';
import { memoryMarker, withUserMemory, type UserMemoryMode } from '../core/user-memory-context.js';
import type { ChatMessage } from '../spec/chat.js';
import { silentLogger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { newTurn } from '../stores/testing/record-fixtures.js';
import { createJudgeWorker } from './create-judge-worker.js';
import { createPrmJudge } from './create-prm-judge.js';
import { judgeModelOfSingleAnswers } from './judge-model.js';
import { createScoringEngine } from './testing/scoring-engine.js';

const hint = 'Write the answer as plain text, without bold.';
const system: ChatMessage = { role: 'system', content: 'You are a tutor.' };

describe('the judge and each user\'s memory', () => {
  let store: RecordStore;
  let clock: number;

  beforeEach(async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    clock = 10_000;
    await store.upsertSession({ id: 's1', tenant: 'team', user: 'team/alice', at: 0 });
    await store.remember({ user: 'team/alice', kind: 'note', text: 'Prefers metric units.', sourceTurnId: null, at: 1 }, 30);
  });

  afterEach(async () => {
    await store.close();
  });

  /** Judges turn t0 (with `messages`) under `mode`; returns the teacher's prompts the engine scored. */
  async function judge(mode: UserMemoryMode, messages: ChatMessage[], user: string | null = 'team/alice'): Promise<ChatMessage[][]> {
    await store.recordTurn(newTurn('t0', { tenant: 'team', user, messages: [...messages, { role: 'user', content: 'What is 2+3?' }] }));
    await store.linkNextState('t0', [{ role: 'user', content: 'no bold please' }], 5_000);
    const model = judgeModelOfSingleAnswers(async (request) =>
      request.messages[0]?.content === hintSystemPrompt ? `\\boxed{1} [HINT_START]${hint}[HINT_END]` : 'The user complains. \\boxed{-1}',
    );
    const engine = createScoringEngine(() => ({ promptTokenIds: [1], logprobs: [-1, -1] }));
    const worker = createJudgeWorker({
      store,
      judge: createPrmJudge({ judgeId: 'openai', modelName: 'judge-model', model, clock: () => clock }),
      method: 'opd',
      engine,
      logger: silentLogger,
      now: () => clock,
      createId: (prefix) => `${prefix}-${clock++}`,
      workerId: 'worker-a',
      ...(mode === 'off' ? {} : { memory: { store, mode, maximumEntries: 30, maximumTokens: 400 } }),
    });
    expect(await worker.drain()).toEqual({ done: 1, failed: 0 });
    return engine.scoreRequests.flatMap((request) => ('messages' in request.prompt ? [request.prompt.messages] : []));
  }

  it('with teacher, adds the accepted hint to the user\'s memory and conditions the teacher on the memory beside the hint', async () => {
    const [teacher] = await judge('teacher', [system]);
    expect(teacher?.[0]?.content).toBe(`You are a tutor.\n\n${memoryMarker}\n- Prefers metric units.`);
    // The turn's own hint is appended as the hint, not repeated in the memory.
    expect(teacher?.at(-1)?.content.endsWith(hint)).toBe(true);
    expect((await store.listMemory('team/alice')).map((entry) => [entry.kind, entry.text, entry.sourceTurnId])).toEqual([
      ['note', 'Prefers metric units.', null],
      ['hint', hint, 't0'],
    ]);
  });

  it('with both, the teacher reads the memory as it is now in place of the block the served prompt held', async () => {
    const served = withUserMemory([system], '- An entry edited away since.');
    const [teacher] = await judge('both', served);
    expect(teacher?.[0]?.content).toBe(`You are a tutor.\n\n${memoryMarker}\n- Prefers metric units.`);
  });

  it('with context, keeps the hint but leaves the teacher as the turn was served', async () => {
    const [teacher] = await judge('context', [system]);
    expect(teacher?.[0]).toEqual(system);
    expect(await store.listMemory('team/alice')).toHaveLength(2);
  });

  it('off: no memory kept, the teacher unchanged', async () => {
    const [teacher] = await judge('off', [system]);
    expect(teacher?.[0]).toEqual(system);
    expect(await store.listMemory('team/alice')).toHaveLength(1);
  });

  it('keeps nothing of a turn without a user', async () => {
    const [teacher] = await judge('both', [system], null);
    expect(teacher?.[0]).toEqual(system);
    expect(await store.listUsers({})).toMatchObject([{ user: 'team/alice', memoryEntries: 1 }]);
  });
});
