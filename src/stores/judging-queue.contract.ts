/**
 * The `JudgingQueue` contract (`spec/judging-queue.ts`): how the turn log fills the judge queue
 * (links and feedback), leases, retries, judgements, samples and their counts.
 * `runRecordStoreContract` runs it, so every store implementation does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { JudgeVote, NewSample, NewTurn } from '../spec/records.js';
import { expectStoreError, judgement, newTurn, sample, verdict } from './testing/record-fixtures.js';

/** A turn of version 3, so that samples and claims carry a version other than the base. */
const turn = (id: string, overrides: Partial<NewTurn> = {}): NewTurn => newTurn(id, { policyVersion: 3, ...overrides });

export function runJudgingQueueContract(currentStore: () => RecordStore): void {
  describe('judging', () => {
    let store: RecordStore;
    const claim = (workerId: string, now: number, limit = 10, leaseMs = 1_000) =>
      store.claimTurnsForJudging({ limit, leaseMs, now, workerId });
    const ids = async (claims: Promise<{ turn: { id: string } }[]>) => (await claims).map((claimed) => claimed.turn.id);

    beforeEach(async () => {
      store = currentStore();
      await store.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
    });

    it('queues exactly the trainable main turns whose next state is linked, oldest link first', async () => {
      await store.recordTurn(turn('a'));
      await store.recordTurn(turn('b'));
      await store.recordTurn(turn('untrainable', { trainable: false }));
      await store.recordTurn(turn('unlinked'));
      expect(await claim('w1', 10_000)).toEqual([]);
      await store.linkNextState('b', [{ role: 'user', content: 'thanks' }], 500);
      await store.linkNextState('a', [{ role: 'user', content: 'redo' }], 600);
      await store.linkNextState('untrainable', [{ role: 'user', content: 'ok' }], 700);
      const claims = await claim('w1', 10_000);
      expect(claims.map((claimed) => claimed.turn.id)).toEqual(['b', 'a']);
      expect(claims[0]).toEqual({
        turn: await store.getTurn('b'),
        generation: 1,
        attempts: 0,
        feedback: null,
        judgements: [],
      });
    });

    it('leases claimed turns: claimable again only when the lease expires', async () => {
      await store.recordTurn(turn('a'));
      await store.recordTurn(turn('b'));
      await store.linkNextState('a', [{ role: 'user', content: 'ok' }], 500);
      await store.linkNextState('b', [{ role: 'user', content: 'ok' }], 600);
      expect(await ids(claim('w1', 1_000, 1))).toEqual(['a']);
      expect(await ids(claim('w2', 1_500))).toEqual(['b']);
      expect(await claim('w3', 1_999)).toEqual([]);
      const reclaimed = await claim('w3', 2_000, 1);
      expect(reclaimed.map((claimed) => claimed.turn.id)).toEqual(['a']);
      // The crashed worker's late release changes nothing.
      expect(await store.releaseTurn({ turnId: 'a', workerId: 'w1', generation: 1, outcome: { kind: 'done' } })).toBe(false);
      expect(await claim('w4', 2_100)).toEqual([]);
      expect(await store.releaseTurn({ turnId: 'a', workerId: 'w3', generation: 1, outcome: { kind: 'done' } })).toBe(true);
      expect(await ids(claim('w4', 10_000))).toEqual(['b']);
    });

    it('keeps failed turns queued with an attempt count until their retry time', async () => {
      await store.recordTurn(turn('a'));
      await store.linkNextState('a', [{ role: 'user', content: 'ok' }], 500);
      await claim('w1', 1_000);
      const failed = { kind: 'failed', error: 'judge unreachable', retryAt: 5_000 } as const;
      expect(await store.releaseTurn({ turnId: 'a', workerId: 'w1', generation: 1, outcome: failed })).toBe(true);
      expect((await store.counts()).judging).toMatchObject({ pending: 1, retrying: 1 });
      expect(await claim('w1', 4_999)).toEqual([]);
      const [again] = await claim('w1', 5_000);
      expect(again).toMatchObject({ generation: 1, attempts: 1 });
      expect(await store.releaseTurn({ turnId: 'a', workerId: 'w1', generation: 1, outcome: { kind: 'done' } })).toBe(true);
      expect((await store.counts()).judging).toMatchObject({ pending: 0, retrying: 0 });
      expect(await store.releaseTurn({ turnId: 'missing', workerId: 'w1', generation: 1, outcome: { kind: 'done' } })).toBe(false);
    });

    it('re-queues a turn that gets feedback while claimed: releasing the old generation keeps it queued', async () => {
      await store.recordTurn(turn('a'));
      await store.linkNextState('a', [{ role: 'user', content: 'ok' }], 500);
      await claim('w1', 1_000);
      const feedback = await store.recordFeedback({ turnId: 'a', score: -1, text: 'too long', hint: null, tenant: 't', user: 't', createdAt: 1_100 });
      expect(feedback).toEqual({ id: expect.any(Number), turnId: 'a', score: -1, text: 'too long', hint: null, tenant: 't', user: 't', createdAt: 1_100, rollout: null });
      expect(await store.releaseTurn({ turnId: 'a', workerId: 'w1', generation: 1, outcome: { kind: 'done' } })).toBe(true);
      const [again] = await claim('w2', 1_200);
      expect(again).toMatchObject({ generation: 2, attempts: 0, feedback });
    });

    it('queues feedback on a trainable main turn without a next state, and stores feedback on any turn', async () => {
      await store.recordTurn(turn('last'));
      await store.recordTurn(turn('side', { type: 'side', trainable: false }));
      expect(await store.recordFeedback({ turnId: 'missing', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 1 })).toBeNull();
      await store.recordFeedback({ turnId: 'side', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 10 });
      expect(await store.getFeedback('side')).toMatchObject({ turnId: 'side', score: 1 });
      expect(await claim('w1', 1_000)).toEqual([]);
      await store.recordFeedback({ turnId: 'last', score: 0.5, text: null, hint: null, tenant: null, user: null, createdAt: 20 });
      const latest = await store.recordFeedback({ turnId: 'last', score: null, text: 'be brief', hint: 'Answer in one sentence.', tenant: null, user: null, createdAt: 30 });
      expect(await store.getFeedback('last')).toEqual(latest);
      expect(await store.getFeedback('missing')).toBeNull();
      const [claimed] = await claim('w1', 1_000);
      expect(claimed).toMatchObject({ turn: { id: 'last', nextState: null }, feedback: latest });
    });

    it('keeps every feedback on a turn, oldest first; the latest is the one a claim carries', async () => {
      await store.recordTurn(turn('rated'));
      await store.recordTurn(turn('other'));
      expect(await store.listFeedback('rated')).toEqual([]);
      expect(await store.listFeedback('missing')).toEqual([]);
      const hinted = await store.recordFeedback({ turnId: 'rated', score: -1, text: null, hint: 'Answer in one sentence.', tenant: 't', user: 't', createdAt: 10 });
      await store.recordFeedback({ turnId: 'other', score: 1, text: null, hint: null, tenant: 't', user: 't', createdAt: 15 });
      const thumbsUp = await store.recordFeedback({ turnId: 'rated', score: 1, text: null, hint: null, tenant: 't', user: 't', createdAt: 20 });
      const scored = await store.recordFeedback({ turnId: 'rated', score: 0.5, text: 'better', hint: null, tenant: 't', user: 't', createdAt: 30 });
      expect(await store.listFeedback('rated')).toEqual([hinted, thumbsUp, scored]);
      expect(await store.listFeedback('other')).toHaveLength(1);
      expect(await store.getFeedback('rated')).toEqual(scored);
      const claimed = (await claim('w1', 1_000)).find((entry) => entry.turn.id === 'rated');
      expect(claimed).toMatchObject({ turn: { id: 'rated' }, feedback: scored });
    });

    it('keeps one judgement per judge identity, the latest last', async () => {
      await store.recordTurn(turn('a'));
      const first = await store.recordJudgement(judgement('a'));
      const other = await store.recordJudgement(judgement('a', { promptVersion: 'clawrl-prm-2', score: -1, createdAt: 2_100 }));
      const replaced = await store.recordJudgement(
        judgement('a', {
          score: 0,
          hint: 'Say it in one line.',
          hintCandidates: ['Say it in one line.', 'Shorter.'],
          hintSelection: 'longest',
          createdAt: 2_200,
        }),
      );
      expect(other.id).toBeGreaterThan(first.id);
      expect(replaced.id).toBeGreaterThan(other.id);
      expect(await store.listJudgements('a')).toEqual([other, replaced]);
      expect(await store.listJudgements('missing')).toEqual([]);
      await expectStoreError(store.recordJudgement(judgement('missing')));
    });

    it('records samples with the turn tokens; a new sample supersedes the ready one', async () => {
      await store.recordTurn(turn('a'));
      await store.recordTurn(turn('b', { responseTokenIds: [7], logprobs: [-2] }));
      const first = await store.recordSample(sample('x1', 'a'));
      expect(first).toEqual({
        ...sample('x1', 'a'),
        sessionId: 's1',
        user: null,
        promptTokenIds: [1, 2, 3],
        responseTokenIds: [4, 5],
        rolloutLogprobs: [-0.5, -0.25],
        judgedAdvantages: null,
        updatedAt: 3_000,
      });
      const dropped = sample('y1', 'b', { status: 'dropped', dropReason: 'no-hint', lossMask: [], distillationGaps: null, teacherLogprobs: null, support: null });
      await store.recordSample(dropped);
      await store.recordSample(sample('x2', 'a', { method: 'rl', distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 4_000 }));
      expect(await store.listSamples({ turnId: 'a' })).toMatchObject([
        { id: 'x1', status: 'dropped', dropReason: 'superseded', updatedAt: 4_000 },
        { id: 'x2', status: 'ready', dropReason: null },
      ]);
      expect((await store.listSamples({ status: 'ready' })).map((record) => record.id)).toEqual(['x2']);
      expect((await store.listSamples({ status: 'dropped' })).map((record) => record.id)).toEqual(['x1', 'y1']);
      expect((await store.listSamples({ limit: 2, offset: 1 })).map((record) => record.id)).toEqual(['y1', 'x2']);
      expect(await store.listSamples({ turnId: 'missing' })).toEqual([]);
    });

    it('rejects samples of unknown turns, duplicate ids, unknown methods and per-token arrays that do not fit the response', async () => {
      await store.recordTurn(turn('a'));
      await expectStoreError(store.recordSample(sample('x', 'missing')));
      await expectStoreError(store.recordSample(sample('x', 'a', { distillationGaps: [1] })));
      await expectStoreError(store.recordSample(sample('x', 'a', { method: 'grpo' as NewSample['method'] })));
      await expectStoreError(store.recordSample(sample('x', 'a', { teacherLogprobs: [1, 2, 3] })));
      await store.recordSample(sample('x', 'a'));
      await expectStoreError(store.recordSample(sample('x', 'a')));
      expect((await store.listSamples()).map((record) => [record.id, record.status])).toEqual([['x', 'ready']]);
    });

    it('moves only ready samples to trained or dropped', async () => {
      await store.recordTurn(turn('a'));
      await store.recordTurn(turn('b'));
      await store.recordSample(sample('x', 'a'));
      await store.recordSample(sample('y', 'b'));
      expect(await store.updateSampleStatus({ ids: ['x', 'missing'], status: 'trained', at: 5_000 })).toBe(1);
      expect(await store.updateSampleStatus({ ids: ['x', 'y'], status: 'dropped', reason: 'stale', at: 6_000 })).toBe(1);
      expect(await store.listSamples()).toMatchObject([
        { id: 'x', status: 'trained', dropReason: null, updatedAt: 5_000 },
        { id: 'y', status: 'dropped', dropReason: 'stale', updatedAt: 6_000 },
      ]);
    });

    it('lists turn ids oldest first, since a start time, optionally only linked main turns', async () => {
      await store.recordTurn(turn('early', { timings: { startedAt: 100, firstTokenAt: null, endedAt: 110 } }));
      await store.recordTurn(turn('late', { timings: { startedAt: 900, firstTokenAt: null, endedAt: 910 } }));
      await store.recordTurn(turn('side', { type: 'side', timings: { startedAt: 950, firstTokenAt: null, endedAt: 960 } }));
      await store.linkNextState('early', [{ role: 'user', content: 'ok' }], 200);
      expect(await store.listTurnIds()).toEqual(['early', 'late', 'side']);
      expect(await store.listTurnIds({ since: 900 })).toEqual(['late', 'side']);
      expect(await store.listTurnIds({ linkedOnly: true })).toEqual(['early']);
      expect(await store.listTurnIds({ limit: 1, offset: 1 })).toEqual(['late']);
    });

    it('counts judged and pending turns, hints, latency, vote agreement, samples and turns left without a next state', async () => {
      const empty = (await store.counts()).judging;
      expect(empty).toEqual({
        judged: 0,
        pending: 0,
        retrying: 0,
        withoutNextState: 0,
        hintsAccepted: 0,
        hintsRejected: 0,
        averageLatencyMs: null,
        voteAgreement: null,
        samples: { ready: 0, trained: 0, dropped: 0 },
        rolloutSamples: { ready: 0, trained: 0, dropped: 0 },
      });
      for (const id of ['a', 'b', 'c', 'last']) await store.recordTurn(turn(id));
      for (const id of ['a', 'b', 'c']) await store.linkNextState(id, [{ role: 'user', content: 'ok' }], 500);
      const hintVote: JudgeVote = { kind: 'hint', text: '\\boxed{-1}', score: -1, hint: null, rejection: 'negative-vote' };
      await store.recordJudgement(judgement('a', { latencyMs: 100 }));
      await store.recordJudgement(judgement('b', { votes: [verdict(-1), hintVote], score: -1, latencyMs: 300 }));
      await store.recordJudgement(
        judgement('b', { judge: 'rules', votes: [hintVote], score: 1, hint: 'Be brief, please.', latencyMs: 200 }),
      );
      await store.recordFeedback({ turnId: 'c', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 600 });
      await store.recordSample(sample('x', 'a'));
      await store.recordSample(sample('y', 'b', { status: 'dropped', dropReason: 'no-hint', lossMask: [], distillationGaps: null, teacherLogprobs: null, support: null }));
      await store.closeSession('s1', 'done', 700);
      expect((await store.counts()).judging).toEqual({
        judged: 3,
        pending: 3,
        retrying: 0,
        withoutNextState: 1,
        hintsAccepted: 1,
        hintsRejected: 1,
        averageLatencyMs: 200,
        // Readable verdicts: a has 1, 1, −1 (two agree with +1); b has −1 (agrees).
        voteAgreement: 3 / 4,
        samples: { ready: 1, trained: 0, dropped: 1 },
        rolloutSamples: { ready: 0, trained: 0, dropped: 0 },
      });
      await store.recordFeedback({ turnId: 'last', score: -1, text: null, hint: null, tenant: null, user: null, createdAt: 800 });
      expect((await store.counts()).judging).toMatchObject({ judged: 4, pending: 4, withoutNextState: 0 });
    });

    it("keeps a rollout's provenance on its feedback and counts the samples built on it as rollout samples", async () => {
      for (const id of ['live', 'rolled', 'flat']) await store.recordTurn(turn(id));
      const rollout = { runId: 'run', environment: 'arithmetic', step: 2, group: 'run-s2-t0', turnIndex: 1, outcomeReward: 1, processReward: 0.5, reward: 1.5 };
      const live = await store.recordFeedback({ turnId: 'live', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 600 });
      const rolled = await store.recordFeedback({ turnId: 'rolled', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 610, rollout });
      const flat = await store.recordFeedback({ turnId: 'flat', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 620, rollout: { ...rollout, group: null } });
      expect(live?.rollout).toBeNull();
      expect(rolled?.rollout).toEqual(rollout);
      expect(await store.getFeedback('rolled')).toEqual(rolled);
      expect(await store.listFeedback('flat')).toEqual([flat]);
      await store.recordSample(sample('l', 'live', { feedbackId: live?.id ?? null }));
      await store.recordSample(sample('r', 'rolled', { feedbackId: rolled?.id ?? null, score: 1.5, group: { id: 'run-s2-t0', turnIndex: 1 } }));
      await store.recordSample(sample('f', 'flat', { feedbackId: flat?.id ?? null, status: 'dropped', dropReason: 'no-score', lossMask: [], distillationGaps: null, teacherLogprobs: null, support: null }));
      expect((await store.counts()).judging).toMatchObject({
        samples: { ready: 2, trained: 0, dropped: 1 },
        rolloutSamples: { ready: 1, trained: 0, dropped: 1 },
      });
      // The trainer reads each claimed sample's group from the sample itself, and its reward unbounded.
      const claimed = await store.claimSamplesForTraining({ limit: 5, leaseMs: 1_000, now: 700, workerId: 'trainer' });
      expect(claimed.map((sample) => [sample.id, sample.score, sample.group])).toEqual([['l', 1, null], ['r', 1.5, { id: 'run-s2-t0', turnIndex: 1 }]]);
    });
  });
}
