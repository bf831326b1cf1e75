/**
 * The dashboard's data routes, `GET /admin/dashboard/...`: what each page of the web UI reads. Each
 * route reads one page or one time window through `store.dashboard` and the seam's point reads, so
 * a refresh costs the same however many turns the store holds (`clawrl bench dashboard`): a page
 * of a session's turns is one read of the turns and one of their judging, never a read per turn.
 */
import type { Hono } from 'hono';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatMessage } from '../../spec/chat.js';
import { turnRewardOf } from '../../core/rl/build-samples.js';
import type { SampleSummary, TurnJudgingSummary } from '../../spec/dashboard-queries.js';
import type { FeedbackRecord, JudgementRecord, TurnRecord } from '../../spec/records.js';
import { inReadScope, readScopeOf, type GatewayVariables } from '../api-key-authenticator.js';
import { statusOf, tenantStatusOf, visibleTurn } from './admin-routes.js';
import type {
  JudgementView,
  OverviewResponse,
  PoliciesResponse,
  SampleView,
  SessionPageResponse,
  SessionTurnsResponse,
  StatusView,
  TenantOverviewResponse,
  TenantStatusView,
  TurnTokensResponse,
} from './dashboard-api.js';
import type { GatewayContext } from '../gateway-context.js';

const minute = 60_000;

function integerQuery(value: string | undefined, name: string, fallback: number, minimum: number, maximum: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < minimum || parsed > maximum) {
    throw new ClawrlError('invalid_request', `${name} must be an integer in ${minimum}..${maximum}, got '${value}'.`, { param: name });
  }
  return parsed;
}

function textOf(message: ChatMessage): string {
  const calls = (message.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`);
  return [message.content, ...calls].filter((text) => text !== '').join('\n');
}

/** The messages after the last assistant message, what the turn answered: the system ones apart from the rest. */
function inputOf(turn: TurnRecord): { input: string; system: string | null } {
  const lastAssistant = turn.messages.map((message) => message.role).lastIndexOf('assistant');
  const answered = turn.messages.slice(lastAssistant + 1);
  const system = answered.filter((message) => message.role === 'system');
  return {
    input: answered.filter((message) => message.role !== 'system').map(textOf).join('\n\n'),
    system: system.length === 0 ? null : system.map(textOf).join('\n\n'),
  };
}

/** Where the score a turn trains on came from (`turnRewardOf` picks it). */
function scoreSourceOf(judgement: JudgementRecord | null, feedback: FeedbackRecord | null): JudgementView['scoreSource'] {
  if (feedback?.rollout != null) return 'rollout';
  if (feedback !== null && feedback.score !== null) return 'feedback';
  return judgement !== null && judgement.score !== null ? 'judge' : null;
}

/** The latest judgement with the feedback that counts overriding its score and hint, as `/admin/turns/{id}`'s `judgement`. */
function judgementView({ judgement, feedback }: Pick<TurnJudgingSummary, 'judgement' | 'feedback'>): JudgementView | null {
  if (judgement === null && feedback === null) return null;
  return {
    score: turnRewardOf(feedback, judgement?.score ?? null),
    scoreSource: scoreSourceOf(judgement, feedback),
    judgeScore: judgement?.score ?? null,
    votes: (judgement?.votes ?? []).map((vote) => ({ kind: vote.kind, text: vote.text, score: vote.score, hint: vote.hint, rejection: vote.rejection })),
    hint: feedback?.hint ?? judgement?.hint ?? null,
    hintCandidates: judgement?.hintCandidates ?? [],
    judgeHint: judgement?.hint ?? null,
    hintSelection: judgement?.hintSelection ?? null,
    judge: feedback === null ? (judgement?.judge ?? '') : 'feedback',
    feedback:
      feedback === null
        ? null
        : {
            score: feedback.score,
            text: feedback.text,
            hint: feedback.hint,
            rollout:
              feedback.rollout == null
                ? null
                : {
                    runId: feedback.rollout.runId,
                    environment: feedback.rollout.environment,
                    step: feedback.rollout.step,
                    outcomeReward: feedback.rollout.outcomeReward,
                    processReward: feedback.rollout.processReward,
                    reward: feedback.rollout.reward,
                  },
          },
  };
}

function sampleView(sample: SampleSummary | null): SampleView | null {
  if (sample === null) return null;
  return { id: sample.id, status: sample.status, method: sample.method, score: sample.score, dropReason: sample.dropReason, policyVersion: sample.policyVersion };
}

const notJudged: Omit<TurnJudgingSummary, 'turnId'> = { judgement: null, feedback: null, sample: null };

function decodeCursor(value: string | undefined): { createdAt: number; id: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const separator = value.indexOf(':');
  const createdAt = Number(value.slice(0, separator));
  if (separator < 1 || !Number.isSafeInteger(createdAt)) throw new ClawrlError('invalid_request', `after must be '<createdAt>:<id>', got '${value}'.`, { param: 'after' });
  return { createdAt, id: value.slice(separator + 1) };
}

/**
 * How long the overview reuses `/admin/status`'s answer. Its counts are counters the stores keep
 * (a read of one small table however many turns there are, `clawrl bench dashboard`); reusing the
 * answer still makes any number of open dashboards cost one status read per 10 s rather than one
 * per dashboard refresh. The charts' windows are read fresh on every refresh. A tenant's counts
 * are a scan of its rows (`tenantCounts`), so they are reused the same way, one answer per tenant.
 */
const statusReuseMs = 10_000;

export function registerDashboardRoutes(app: Hono<{ Variables: GatewayVariables }>, context: GatewayContext): void {
  // Keyed by the reader's tenant; '' is the admin key's status of every tenant.
  const statuses = new Map<string, { at: number; value: Promise<Record<string, unknown>> }>();
  const recentStatus = (tenant: string | undefined) => {
    const now = context.now();
    const key = tenant ?? '';
    const kept = statuses.get(key);
    if (kept !== undefined && now - kept.at < statusReuseMs) return kept.value;
    const value = tenant === undefined ? statusOf(context) : tenantStatusOf(context, tenant);
    statuses.set(key, { at: now, value });
    // A failed read is not reused.
    value.catch(() => {
      if (statuses.get(key)?.value === value) statuses.delete(key);
    });
    return value;
  };

  app.get('/admin/dashboard/overview', async (c) => {
    const scope = readScopeOf(c.get('principal'));
    if (scope !== undefined) {
      const tenantBody: TenantOverviewResponse = { tenant: scope.tenant, now: context.now(), status: (await recentStatus(scope.tenant)) as unknown as TenantStatusView };
      return c.json(tenantBody);
    }
    const windowMs = integerQuery(c.req.query('window'), 'window', 60 * minute, minute, 7 * 24 * 60 * minute);
    const bucketMs = integerQuery(c.req.query('bucket'), 'bucket', minute, 1_000, 24 * 60 * minute);
    if (windowMs / bucketMs > 2_000) throw new ClawrlError('invalid_request', 'window / bucket must be at most 2000 buckets.', { param: 'bucket' });
    const now = context.now();
    const since = Math.floor((now - windowMs) / bucketMs) * bucketMs;
    const [current, series, steps] = await Promise.all([
      recentStatus(undefined),
      context.store.dashboard.activitySeries({ since, until: now + 1, bucketMs }),
      context.store.listTrainingSteps({ limit: 500 }),
    ]);
    const body: OverviewResponse = {
      tenant: null,
      now,
      since,
      bucketMs,
      status: current as unknown as StatusView,
      series,
      training: steps.reverse().map((step) => ({
        step: step.step,
        policyVersion: step.policyVersion,
        endedAt: step.endedAt,
        loss: step.metrics.loss,
        kl: step.metrics.kl,
        anchorKl: step.metrics.anchorKl ?? null,
        clipFraction: step.metrics.clipFraction,
        learningRate: step.metrics.learningRate,
        samplesUsed: step.metrics.samplesUsed,
        samplesDropped: step.metrics.samplesDropped,
      })),
    };
    return c.json(body);
  });

  app.get('/admin/dashboard/sessions', async (c) => {
    const limit = integerQuery(c.req.query('limit'), 'limit', 50, 1, 500);
    const search = c.req.query('search')?.trim();
    const after = decodeCursor(c.req.query('after'));
    const scope = readScopeOf(c.get('principal'));
    const data = await context.store.dashboard.listSessionSummaries({
      limit,
      ...(search === undefined ? {} : { search }),
      ...(after === undefined ? {} : { after }),
      ...(scope === undefined ? {} : { tenant: scope.tenant }),
      ...(scope?.user === undefined ? {} : { user: scope.user }),
    });
    const last = data.at(-1);
    const body: SessionPageResponse = { data, next: data.length === limit && last !== undefined ? `${last.createdAt}:${last.id}` : null };
    return c.json(body);
  });

  app.get('/admin/dashboard/sessions/:id/turns', async (c) => {
    const scope = readScopeOf(c.get('principal'));
    const found = await context.store.getSession(c.req.param('id'));
    // Another tenant's (or, for a user's key, another user's) session is as unknown as a missing one.
    const session = found === null || !inReadScope(scope, found) ? null : found;
    if (session === null) throw new ClawrlError('not_found', `No session with id '${c.req.param('id')}'.`);
    const from = integerQuery(c.req.query('from'), 'from', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = integerQuery(c.req.query('limit'), 'limit', 50, 1, 200);
    const ids = session.turnIds.slice(from, from + limit);
    const [turns, judgings] = await Promise.all([context.store.getTurns(ids), context.store.dashboard.turnJudgings(ids)]);
    const judgingById = new Map(judgings.map((judging) => [judging.turnId, judging]));
    const { turnIds, ...rest } = session;
    const body: SessionTurnsResponse = {
      session: { ...rest, mainTurns: turnIds.length },
      turns: turns.map((turn) => {
        const judging = judgingById.get(turn.id) ?? notJudged;
        return {
          id: turn.id,
          index: turn.index,
          policyVersion: turn.policyVersion,
          startedAt: turn.timings.startedAt,
          ...inputOf(turn),
          response: textOf(turn.response),
          judgement: judgementView(judging),
          sample: sampleView(judging.sample),
        };
      }),
      next: from + limit < turnIds.length ? from + limit : null,
    };
    return c.json(body);
  });

  app.get('/admin/dashboard/turns/:id', async (c) => {
    const turn = await visibleTurn(context, c.req.param('id'), readScopeOf(c.get('principal')));
    const [judgings, samples] = await Promise.all([context.store.dashboard.turnJudgings([turn.id]), context.store.listSamples({ turnId: turn.id, limit: 1000 })]);
    const judging = judgings[0] ?? notJudged;
    const gaps = [...samples].reverse().find((candidate) => candidate.distillationGaps !== null)?.distillationGaps ?? null;
    const texts = context.decodeTokens === undefined ? null : await context.decodeTokens([...turn.promptTokenIds, ...turn.responseTokenIds]);
    const token = (id: number, position: number) => ({ id, text: texts?.[position] ?? null });
    const body: TurnTokensResponse = {
      id: turn.id,
      sessionId: turn.sessionId,
      index: turn.index,
      policyVersion: turn.policyVersion,
      prompt: turn.promptTokenIds.map(token),
      response: turn.responseTokenIds.map((id, position) => ({ ...token(id, turn.promptTokenIds.length + position), logprob: turn.logprobs[position] ?? null, teacherGap: gaps?.[position] ?? null })),
      judgement: judgementView(judging),
      sample: sampleView(judging.sample),
    };
    return c.json(body);
  });

  app.get('/admin/dashboard/policies', async (c) => {
    const limit = integerQuery(c.req.query('limit'), 'limit', 50, 1, 500);
    const before = integerQuery(c.req.query('before'), 'before', Number.MAX_SAFE_INTEGER, 0, Number.MAX_SAFE_INTEGER);
    const page = (await context.store.listPolicyVersions()).filter((record) => record.version < before).reverse().slice(0, limit);
    const newest = page[0]?.version ?? 0;
    const oldest = page.at(-1)?.version ?? 0;
    const scores = new Map((await context.store.dashboard.policyTurnScores({ from: oldest, to: newest })).map((score) => [score.version, score]));
    const body: PoliciesResponse = {
      data: page.map((record) => ({
        version: record.version,
        parent: record.parent,
        createdAt: record.createdAt,
        active: record.active,
        kind: record.kind,
        step: record.step,
        samples: record.samples,
        metrics: record.metrics === null ? null : { loss: record.metrics.loss, clipFraction: record.metrics.clipFraction, kl: record.metrics.kl, learningRate: record.metrics.learningRate },
        score: scores.get(record.version) ?? null,
        state: record.state,
        stateReason: record.stateReason,
        stateChangedAt: record.stateChangedAt,
        gate: record.gate,
        canary: record.canary,
      })),
      next: page.length === limit && oldest > 0 ? oldest : null,
    };
    return c.json(body);
  });

  app.get('/admin/dashboard/experiments', async (c) =>
    c.json({ resultsDir: context.experiments?.folder ?? null, data: (await context.experiments?.list()) ?? [] }),
  );
}
