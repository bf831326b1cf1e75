/**
 * `POST /v1/feedback`: explicit feedback on a turn, `{turn_id | session_id, score (−1..1) |
 * thumbs ("up" | "down") | rollout, text?, hint?}`. `session_id` targets the session's latest main
 * turn. A rollout driver or a manager sends `rollout` instead of a score: the turn's reward
 * (unbounded) with its provenance (run, group, turn index, outcome and process parts), never an
 * advantage. Feedback overrides the judge's reward for that turn, and its hint (or its text, judged as what the
 * user said next) feeds OPD; recording it queues the turn so its sample is rebuilt. Feedback on a
 * turn that already has some is kept beside it: the newest counts for training, and the response
 * names the earlier ones it replaces (`replaced_feedback_ids`). With `--user-memory` on, its hint
 * (else its text) also joins the memory of the turn's user (`served-memory.ts`). A tenant can
 * only reach its own turns: others are reported unknown (404), like turns that do not exist.
 */
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { maximumHintChars, minimumHintChars } from '../../core/judge-votes.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RolloutProvenance, TurnRecord } from '../../spec/records.js';
import { inReadScope, readScopeOf, tenantOf, type Principal } from '../api-key-authenticator.js';
import { feedbackRequestSchema, type FeedbackRequest, type FeedbackResponse } from './feedback-api.js';
import type { GatewayContext } from '../gateway-context.js';
import { parseJsonBody } from '../parse-wire-request.js';
import { rememberFeedback } from '../served-memory.js';

const feedbackBodyLimitBytes = 64 * 1024;

function parseFeedback(text: string): FeedbackRequest & { hint?: string } {
  const validation = feedbackRequestSchema.safeParse(parseJsonBody(text));
  if (!validation.success) {
    const issue = validation.error.issues[0];
    const param = issue?.path.join('.') ?? '';
    throw new ClawrlError('invalid_request', `Invalid feedback: ${param === '' ? '' : `${param}: `}${issue?.message ?? 'bad body'}`, {
      ...(param === '' ? {} : { param }),
    });
  }
  const body = validation.data;
  if ((body.turn_id === undefined) === (body.session_id === undefined)) {
    throw new ClawrlError('invalid_request', 'Give exactly one of turn_id and session_id.', { param: 'turn_id' });
  }
  if (body.score !== undefined && body.thumbs !== undefined) {
    throw new ClawrlError('invalid_request', 'Give score or thumbs, not both.', { param: 'score' });
  }
  if (body.rollout !== undefined && (body.score !== undefined || body.thumbs !== undefined)) {
    throw new ClawrlError('invalid_request', "A rollout's reward is rollout.reward; give no score or thumbs beside it.", { param: body.score === undefined ? 'thumbs' : 'score' });
  }
  if (body.score === undefined && body.thumbs === undefined && body.rollout === undefined && body.text === undefined && body.hint === undefined) {
    throw new ClawrlError('invalid_request', 'Feedback needs a score, thumbs, a rollout, text or a hint.', { param: 'score' });
  }
  if (body.hint !== undefined) {
    const length = body.hint.trim().length;
    if (length < minimumHintChars || length > maximumHintChars) {
      throw new ClawrlError('invalid_request', `hint must have ${minimumHintChars} to ${maximumHintChars} characters, got ${length}.`, {
        param: 'hint',
      });
    }
  }
  return body;
}

function rolloutProvenanceOf(rollout: FeedbackRequest['rollout']): RolloutProvenance | null {
  if (rollout === undefined) return null;
  return {
    runId: rollout.run_id,
    environment: rollout.environment,
    step: rollout.step,
    group: rollout.group,
    turnIndex: rollout.turn_index,
    outcomeReward: rollout.outcome_reward,
    processReward: rollout.process_reward,
    reward: rollout.reward,
  };
}

/** A tenant's key scores its tenant's turns; a user's key only that user's. */
function visibleTo(turn: TurnRecord, principal: Principal): boolean {
  return inReadScope(readScopeOf(principal), turn);
}

async function targetTurn(context: GatewayContext, body: FeedbackRequest, principal: Principal): Promise<TurnRecord> {
  let turn: TurnRecord | null = null;
  if (body.turn_id !== undefined) {
    turn = await context.store.getTurn(body.turn_id);
  } else if (body.session_id !== undefined) {
    const latest = await context.store.getLastMainTurn(body.session_id);
    turn = latest === null ? null : await context.store.getTurn(latest.id);
  }
  if (turn === null || !visibleTo(turn, principal)) {
    throw body.turn_id !== undefined
      ? new ClawrlError('not_found', `No turn with id '${body.turn_id}'.`, { param: 'turn_id' })
      : new ClawrlError('not_found', `No session '${body.session_id ?? ''}' with a main turn.`, { param: 'session_id' });
  }
  return turn;
}

export function registerFeedbackRoute(app: Hono<{ Variables: { principal: Principal } }>, context: GatewayContext): void {
  const limitBody = bodyLimit({
    maxSize: feedbackBodyLimitBytes,
    onError: () => {
      throw new ClawrlError('request_too_large', `The feedback body exceeds ${feedbackBodyLimitBytes} bytes.`);
    },
  });
  app.post('/v1/feedback', limitBody, async (c) => {
    const body = parseFeedback(await c.req.text());
    const principal = c.get('principal');
    const turn = await targetTurn(context, body, principal);
    const score = body.thumbs === undefined ? (body.score ?? null) : body.thumbs === 'up' ? 1 : -1;
    const recorded = await context.store.recordFeedback({
      turnId: turn.id,
      score,
      text: body.text ?? null,
      hint: body.hint?.trim() ?? null,
      tenant: tenantOf(principal),
      user: principal.user,
      createdAt: context.now(),
      rollout: rolloutProvenanceOf(body.rollout),
    });
    if (recorded === null) throw new ClawrlError('not_found', `No turn with id '${turn.id}'.`, { param: 'turn_id' });
    // What the user said joins their memory (`--user-memory`), as the store kept it: redacted.
    await rememberFeedback(context, turn, recorded);
    // Read after the write: ids increase, so whatever arrived concurrently sorts on its own side.
    const earlier = (await context.store.listFeedback(turn.id)).filter((feedback) => feedback.id < recorded.id);
    const response: FeedbackResponse = {
      object: 'feedback',
      id: recorded.id,
      turn_id: turn.id,
      session_id: turn.sessionId,
      score: recorded.score,
      text: recorded.text,
      hint: recorded.hint,
      ...(body.rollout === undefined ? {} : { rollout: body.rollout }),
      queued: turn.type === 'main' && turn.trainable,
      replaced_feedback_ids: earlier.map((feedback) => feedback.id),
    };
    return c.json(response);
  });
}
