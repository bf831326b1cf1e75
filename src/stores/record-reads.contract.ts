/**
 * The dashboard's part of the `RecordReads` contract (`spec/record-reads.ts`): keyset pages of
 * sessions, bucketed activity, per-version scores and a page of turns' judging (`store.dashboard`); the counts are in
 * `record-counts.contract.ts`, the point reads with the writes they read back. `runRecordStoreContract`
 * runs it, so every store does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { NewJudgement, NewSample, NewTurn } from '../spec/records.js';
import { judgement as judgingJudgement, newTurn, sample as judgingSample } from './testing/record-fixtures.js';

/** A main turn of version 0 unless `overrides` say otherwise. */
const turn = (id: string, sessionId: string, overrides: Partial<NewTurn> = {}): NewTurn => newTurn(id, { sessionId, ...overrides });

/** A rules judgement of `score` whose two votes agree or split. */
function judgement(turnId: string, score: 1 | -1 | 0 | null, createdAt: number, agreeing: boolean): NewJudgement {
  const vote = (value: 1 | -1) => ({ kind: 'verdict' as const, text: `\\boxed{${value}}`, score: value, hint: null, rejection: null });
  const votes = score === null ? [] : agreeing ? [vote(1), vote(1)] : [vote(1), vote(-1)];
  return judgingJudgement(turnId, { judge: 'rules', judgeModel: 'rules', promptVersion: 'v1', score, votes, latencyMs: 5, createdAt });
}

/** An `rl` sample of version 0 created at 1 000 unless `overrides` say otherwise. */
const sample = (id: string, turnId: string, overrides: Partial<NewSample> = {}): NewSample =>
  judgingSample(id, turnId, { method: 'rl', policyVersion: 0, hint: null, distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 1_000, ...overrides });

export function runRecordReadsContract(getStore: () => RecordStore): void {
  describe('dashboard queries', () => {
    let store: RecordStore;
    beforeEach(() => {
      store = getStore();
    });

    it('pages sessions newest first by keyset, with equal creation times in id order, and searches id prefixes and tenants', async () => {
      for (const [id, at, tenant] of [['a1', 100, null], ['a2', 200, 'alice'], ['b1', 200, null], ['b2', 300, 'bob']] as const) {
        await store.upsertSession({ id, tenant, user: tenant, at });
      }
      await store.recordTurn(turn('t1', 'a2'));
      await store.recordTurn(turn('t2', 'a2', { type: 'side' }));
      const first = await store.dashboard.listSessionSummaries({ limit: 2 });
      expect(first.map((session) => session.id)).toEqual(['b2', 'b1']);
      const last = first.at(-1);
      if (last === undefined) throw new Error('no page');
      const second = await store.dashboard.listSessionSummaries({ limit: 2, after: { createdAt: last.createdAt, id: last.id } });
      expect(second).toEqual([
        { id: 'a2', tenant: 'alice', user: 'alice', status: 'open', createdAt: 200, updatedAt: 200, mainTurns: 1, sideTurns: 1 },
        { id: 'a1', tenant: null, user: null, status: 'open', createdAt: 100, updatedAt: 100, mainTurns: 0, sideTurns: 0 },
      ]);
      expect(await store.dashboard.listSessionSummaries({ limit: 2, after: { createdAt: 100, id: 'a1' } })).toEqual([]);
      expect((await store.dashboard.listSessionSummaries({ limit: 10, search: 'b' })).map((session) => session.id)).toEqual(['b2', 'b1']);
      expect((await store.dashboard.listSessionSummaries({ limit: 10, search: 'alice' })).map((session) => session.id)).toEqual(['a2']);
      // LIKE's wildcards in a search are literal characters.
      expect(await store.dashboard.listSessionSummaries({ limit: 10, search: '%' })).toEqual([]);
    });

    it('buckets turns, judgements and samples of a window, and lists the activations in force', async () => {
      await store.upsertSession({ id: 's', tenant: null, user: null, at: 0 });
      await store.recordTurn(turn('early', 's', { timings: { startedAt: 500, firstTokenAt: 501, endedAt: 502 } }));
      await store.recordTurn(turn('m1', 's', { timings: { startedAt: 60_000, firstTokenAt: 60_001, endedAt: 60_002 } }));
      await store.recordTurn(turn('m2', 's', { timings: { startedAt: 60_500, firstTokenAt: 60_501, endedAt: 60_502 } }));
      await store.recordTurn(turn('side', 's', { type: 'side', timings: { startedAt: 61_000, firstTokenAt: 61_001, endedAt: 61_002 } }));
      await store.recordTurn(turn('m3', 's', { timings: { startedAt: 125_000, firstTokenAt: 125_001, endedAt: 125_002 } }));
      await store.recordJudgement(judgement('m1', 1, 70_000, true));
      await store.recordJudgement(judgement('m2', -1, 80_000, false));
      await store.recordJudgement(judgement('m3', null, 130_000, false));
      await store.recordSample(sample('x1', 'm1', { createdAt: 70_000 }));
      await store.recordSample(sample('x2', 'm2', { createdAt: 80_000, status: 'dropped', dropReason: 'no-score', score: null, lossMask: [], distillationGaps: null }));
      await store.recordSample(sample('x3', 'm3', { createdAt: 130_000 }));
      await store.updateSampleStatus({ ids: ['x3'], status: 'dropped', reason: 'stale', at: 131_000 });
      // A sample built on a rollout driver's feedback is a rollout sample.
      await store.recordTurn(turn('r1', 's', { timings: { startedAt: 62_000, firstTokenAt: 62_001, endedAt: 62_002 } }));
      const rollout = { runId: 'run', environment: 'arithmetic', step: 1, group: 'g', turnIndex: 0, outcomeReward: 1, processReward: null, reward: 1 };
      const feedback = await store.recordFeedback({ turnId: 'r1', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 63_000, rollout });
      await store.recordSample(sample('x4', 'r1', { createdAt: 63_000, feedbackId: feedback?.id ?? null }));
      await store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 10 }, { activate: true });
      await store.recordPolicyVersion({ version: 1, parent: 0, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 20 }, { activate: false });
      await store.activatePolicyVersion(1, 20_000);
      await store.activatePolicyVersion(0, 100_000);

      const series = await store.dashboard.activitySeries({ since: 60_000, until: 180_000, bucketMs: 60_000 });
      expect(series.buckets).toEqual([
        { at: 60_000, mainTurns: 3, sideTurns: 1, judgements: 2, meanScore: 0, agreeingVotes: 3, readableVotes: 4 },
        { at: 120_000, mainTurns: 1, sideTurns: 0, judgements: 1, meanScore: null, agreeingVotes: 0, readableVotes: 0 },
      ]);
      expect(series.samples).toEqual([
        { at: 60_000, source: 'live', ready: 1, trained: 0, stale: 0, dropped: 1 },
        { at: 60_000, source: 'rollout', ready: 1, trained: 0, stale: 0, dropped: 0 },
        { at: 120_000, source: 'live', ready: 0, trained: 0, stale: 1, dropped: 0 },
      ]);
      expect(series.activations).toEqual([{ version: 1, at: 20_000 }, { version: 0, at: 100_000 }]);
      expect(await store.dashboard.activitySeries({ since: 200_000, until: 300_000, bucketMs: 60_000 })).toEqual({
        buckets: [],
        samples: [],
        activations: [{ version: 0, at: 100_000 }],
      });
    });

    it('scores the versions of a range by the latest samples of the turns they served', async () => {
      await store.upsertSession({ id: 's', tenant: null, user: null, at: 0 });
      for (const [id, version] of [['v0a', 0], ['v0b', 0], ['v1a', 1], ['v2a', 2]] as const) {
        await store.recordTurn(turn(id, 's', { policyVersion: version }));
      }
      await store.recordSample(sample('old', 'v0a', { score: -1 }));
      // Superseding the ready sample of v0a: only its latest counts.
      await store.recordSample(sample('new', 'v0a', { score: 1 }));
      await store.recordSample(sample('b', 'v0b', { score: 0 }));
      await store.recordSample(sample('c', 'v1a', { policyVersion: 1, score: -1 }));
      await store.recordSample(sample('d', 'v2a', { policyVersion: 2, score: 1 }));
      expect(await store.dashboard.policyTurnScores({ from: 0, to: 1 })).toEqual([
        { version: 0, scoredTurns: 2, meanScore: 0.5 },
        { version: 1, scoredTurns: 1, meanScore: -1 },
      ]);
      expect(await store.dashboard.policyTurnScores({ from: 5, to: 9 })).toEqual([]);
    });

    it("reads a page of turns' latest judgement, feedback and sample in the order asked, unknown turns left out", async () => {
      await store.upsertSession({ id: 's', tenant: null, user: null, at: 0 });
      for (const id of ['judged', 'plain', 'rollout']) await store.recordTurn(turn(id, 's'));
      await store.recordJudgement(judgingJudgement('judged', { judge: 'rules', judgeModel: 'rules', createdAt: 1_500 }));
      const votes = [
        { kind: 'verdict' as const, text: 'Wrong sum. \\boxed{-1}', score: -1 as const, hint: null, rejection: null },
        { kind: 'hint' as const, text: '[HINT_START]Add the carry.[HINT_END] \\boxed{-1}', score: -1 as const, hint: 'Add the carry.', rejection: null },
        { kind: 'hint' as const, text: '\\boxed{1}', score: 1 as const, hint: null, rejection: 'positive-vote' },
      ];
      const latest = await store.recordJudgement(
        judgingJudgement('judged', { score: -1, votes, hint: 'Add the carry.', hintCandidates: ['Add the carry.'], hintSelection: 'longest', createdAt: 2_000 }),
      );
      await store.recordFeedback({ turnId: 'judged', score: 1, text: 'first look', hint: null, tenant: null, user: null, createdAt: 2_500 });
      const counted = await store.recordFeedback({ turnId: 'judged', score: -1, text: 'wrong after all', hint: null, tenant: 'alice', user: 'alice', createdAt: 2_600 });
      await store.recordSample(sample('older', 'judged', { score: 1 }));
      await store.recordSample(sample('newer', 'judged', { score: -1, judgementId: latest.id, feedbackId: counted?.id ?? null }));
      const rollout = { runId: 'run', environment: 'arithmetic', step: 1, group: null, turnIndex: 0, outcomeReward: 1, processReward: 0.5, reward: 1.5 };
      await store.recordFeedback({ turnId: 'rollout', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 3_000, rollout });

      const page = await store.dashboard.turnJudgings(['rollout', 'missing', 'plain', 'judged']);
      expect(page.map((entry) => entry.turnId)).toEqual(['rollout', 'plain', 'judged']);
      expect(page[0]).toMatchObject({ judgement: null, feedback: { turnId: 'rollout', score: null, rollout }, sample: null });
      expect(page[1]).toEqual({ turnId: 'plain', judgement: null, feedback: null, sample: null });
      expect(page[2]?.judgement).toEqual(latest);
      expect(page[2]?.feedback).toEqual(counted);
      expect(page[2]?.sample).toEqual({
        id: 'newer',
        status: 'ready',
        method: 'rl',
        score: -1,
        dropReason: null,
        policyVersion: 0,
        judgementId: latest.id,
        feedbackId: counted?.id ?? null,
      });
      expect(await store.dashboard.turnJudgings([])).toEqual([]);
    });
  });
}
