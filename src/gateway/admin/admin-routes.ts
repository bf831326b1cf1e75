/** Admin routes: read-only views of the record store in the shapes of the design brief §3. */
import type { Hono } from 'hono';
import { turnRewardOf } from '../../core/rl/build-samples.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { FeedbackRecord, JudgementRecord, SampleRecord, SessionStatus, TurnRecord } from '../../spec/records.js';
import { inReadScope, readScopeOf, type GatewayVariables, type ReadScope } from '../api-key-authenticator.js';
import type { GatewayContext } from '../gateway-context.js';

/** What the judge and feedback made of a turn, for its admin view. */
export interface TurnJudging {
  /** Oldest first; the latest is the current one. */
  judgements: JudgementRecord[];
  /** Every feedback on the turn, oldest first; the latest is the one that counts for training. */
  feedback: FeedbackRecord[];
  samples: SampleRecord[];
}

function wireJudgement(judgement: JudgementRecord): Record<string, unknown> {
  return {
    id: judgement.id,
    score: judgement.score,
    votes: judgement.votes,
    hint: judgement.hint,
    hintCandidates: judgement.hintCandidates,
    hintSelection: judgement.hintSelection,
    judge: judgement.judge,
    judgeModel: judgement.judgeModel,
    promptVersion: judgement.promptVersion,
    latencyMs: judgement.latencyMs,
    createdAt: judgement.createdAt,
  };
}

/**
 * The turn's current judgement: the latest judge's, with explicit feedback overriding its score
 * and hint (`judge: 'feedback'`). Null when neither exists.
 */
export function currentJudgement(judging: TurnJudging): Record<string, unknown> | null {
  const latest = judging.judgements.at(-1);
  const feedback = judging.feedback.at(-1) ?? null;
  if (feedback === null) return latest === undefined ? null : wireJudgement(latest);
  return {
    ...(latest === undefined ? { votes: [], judgeModel: null, promptVersion: null } : wireJudgement(latest)),
    score: turnRewardOf(feedback, latest?.score ?? null),
    hint: feedback.hint ?? latest?.hint ?? null,
    judge: 'feedback',
    feedback,
  };
}

/**
 * A sample as the turn view shows it, with where its reward came from (`rewardSource`: a
 * rollout's posted reward, else the feedback's score, else the judge's) and its source: `rollout`
 * when built on a rollout's feedback (then `rollout` holds the group and the rewards), else `live`.
 */
function wireSample(sample: SampleRecord, feedback: readonly FeedbackRecord[]): Record<string, unknown> {
  // The tokens are the turn's own, already in the turn view.
  const { promptTokenIds: _prompt, responseTokenIds: _response, rolloutLogprobs: _rollout, ...rest } = sample;
  const used = feedback.find((entry) => entry.id === sample.feedbackId) ?? null;
  const rewardSource = used?.rollout != null ? 'rollout' : used?.score != null ? 'feedback' : sample.judgementId === null ? null : 'judge';
  return { ...rest, source: used?.rollout == null ? 'live' : 'rollout', rewardSource, rollout: used?.rollout ?? null };
}

export function wireTurn(turn: TurnRecord, judging: TurnJudging = { judgements: [], feedback: [], samples: [] }): Record<string, unknown> {
  return {
    id: turn.id,
    sessionId: turn.sessionId,
    index: turn.index,
    type: turn.type,
    status: turn.status,
    trainable: turn.trainable,
    // Why the request kept it out of training (X-Clawrl-Train: off, or a retry superseded it), and by which retry.
    untrainableReason: turn.untrainableReason,
    supersededBy: turn.supersededBy,
    tenant: turn.tenant,
    user: turn.user,
    model: turn.model,
    policyVersion: turn.policyVersion,
    messages: turn.messages,
    tools: turn.tools,
    sampling: turn.sampling,
    promptTokenIds: turn.promptTokenIds,
    responseTokenIds: turn.responseTokenIds,
    logprobs: turn.logprobs,
    response: turn.response,
    finishReason: turn.finishReason,
    timings: turn.timings,
    error: turn.error,
    nextState: turn.nextState,
    nextStateAt: turn.nextStateAt,
    judgement: currentJudgement(judging),
    judgements: judging.judgements.map(wireJudgement),
    // Repeated feedback keeps every record: the newest (last, also in `judgement.feedback`) counts.
    feedback: judging.feedback,
    samples: judging.samples.map((sample) => wireSample(sample, judging.feedback)),
  };
}

/**
 * With a lineage per user a step trains one user's samples, so one is due when some user (or the
 * global lineage) has `trainEvery` ready, not when all users' together reach it; undefined with one policy.
 */
async function lineageStepDue(context: GatewayContext): Promise<boolean | undefined> {
  const trainEvery = context.policies?.training?.status().trainEvery;
  if (context.userPolicies === undefined || trainEvery === undefined) return undefined;
  return (await context.store.readySamplesByUser(context.now())).some((entry) => entry.ready >= trainEvery);
}

export async function statusOf(context: GatewayContext): Promise<Record<string, unknown>> {
  const [counts, training, stepDue] = await Promise.all([context.store.counts(), context.store.trainingSummary(), lineageStepDue(context)]);
  return {
    sessions: counts.sessions.open + counts.sessions.closed,
    sessionsOpen: counts.sessions.open,
    turns: { main: counts.turns.main, side: counts.turns.side, aborted: counts.turns.aborted, failed: counts.turns.failed },
    trainable: counts.turns.trainable,
    linked: counts.linked,
    judged: counts.judging.judged,
    samples: counts.judging.samples,
    // Live traffic and rollouts train one policy; these split the sample counts by source.
    samplesBySource: {
      live: {
        ready: counts.judging.samples.ready - counts.judging.rolloutSamples.ready,
        trained: counts.judging.samples.trained - counts.judging.rolloutSamples.trained,
        dropped: counts.judging.samples.dropped - counts.judging.rolloutSamples.dropped,
      },
      rollout: counts.judging.rolloutSamples,
    },
    judging: {
      pending: counts.judging.pending,
      retrying: counts.judging.retrying,
      withoutNextState: counts.judging.withoutNextState,
      hints: { accepted: counts.judging.hintsAccepted, rejected: counts.judging.hintsRejected },
      voteAgreement: counts.judging.voteAgreement,
      averageLatencyMs: counts.judging.averageLatencyMs,
    },
    trainSteps: training.steps,
    policyVersion: training.activeVersion ?? 0,
    // The store's active version is what should be served; this is what each engine serves now.
    serving: context.policies?.servingStatus?.() ?? [],
    training: {
      enabled: (context.policies?.training ?? null) !== null,
      ...context.policies?.training?.status(),
      ...(stepDue === undefined ? {} : { stepDue }),
      latestVersion: training.latestVersion ?? 0,
      lastStep: training.lastStep,
    },
    model: context.engine.modelId,
    engine: context.engine.engineId,
  };
}

/** A tenant's own status: its sessions, turns and feedback, and what the server serves. */
export async function tenantStatusOf(context: GatewayContext, tenant: string): Promise<Record<string, unknown>> {
  const [counts, training] = await Promise.all([context.store.dashboard.tenantCounts(tenant), context.store.trainingSummary()]);
  return {
    tenant,
    sessions: counts.sessions.open + counts.sessions.closed,
    sessionsOpen: counts.sessions.open,
    turns: counts.turns,
    feedback: counts.feedback,
    policyVersion: training.activeVersion ?? 0,
    model: context.engine.modelId,
    engine: context.engine.engineId,
  };
}

/** The turn, unless the reader may not see it (another tenant's): then, as for an unknown one, 404. */
export async function visibleTurn(context: GatewayContext, id: string, scope: ReadScope | undefined): Promise<TurnRecord> {
  const turn = await context.store.getTurn(id);
  if (turn === null || !inReadScope(scope, turn)) throw new ClawrlError('not_found', `No turn with id '${id}'.`);
  return turn;
}

export function registerAdminRoutes(app: Hono<{ Variables: GatewayVariables }>, context: GatewayContext): void {
  app.get('/admin/status', async (c) => {
    const scope = readScopeOf(c.get('principal'));
    return c.json(scope === undefined ? await statusOf(context) : await tenantStatusOf(context, scope.tenant));
  });

  app.get('/admin/sessions', async (c) => {
    const status = c.req.query('status');
    if (status !== undefined && status !== 'open' && status !== 'closed') {
      throw new ClawrlError('invalid_request', "status must be 'open' or 'closed'", { param: 'status' });
    }
    const limit = Number(c.req.query('limit') ?? 100);
    const offset = Number(c.req.query('offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || !Number.isInteger(offset) || offset < 0) {
      throw new ClawrlError('invalid_request', 'limit must be 1..1000 and offset a non-negative integer');
    }
    const scope = readScopeOf(c.get('principal'));
    // A key that names a user lists that user's sessions whatever it asks.
    const user = scope?.user ?? c.req.query('user');
    const sessions = await context.store.listSessions({
      ...(status === undefined ? {} : { status: status as SessionStatus }),
      ...(user === undefined || user === '' ? {} : { user }),
      ...(scope === undefined ? {} : { tenant: scope.tenant }),
      limit,
      offset,
    });
    return c.json({ object: 'list', data: sessions });
  });

  app.get('/admin/turns/:id', async (c) => {
    const turn = await visibleTurn(context, c.req.param('id'), readScopeOf(c.get('principal')));
    const [judgements, feedback, samples] = await Promise.all([
      context.store.listJudgements(turn.id),
      context.store.listFeedback(turn.id),
      context.store.listSamples({ turnId: turn.id, limit: 1000 }),
    ]);
    return c.json(wireTurn(turn, { judgements, feedback, samples }));
  });
}
