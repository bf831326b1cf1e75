/**
 * The personalization experiment of the OpenClaw-RL paper, driven over HTTP against a running
 * clawrl server that judges and trains in the background as usual. Requests are sequential, so
 * the experiment itself costs almost no CPU next to the server's sampling and training.
 *
 * Each session: the user's first message is a held-out task that never states the preference;
 * the user answers every response with a complaint (when the response breaks the preference) or
 * thanks (when it keeps it); one or two follow-ups; the last request closes the session
 * (`X-Session-Done`). The server's judge reads those replies as next states. The reply to the last
 * response has no request to ride on; with `finalFeedback` it goes to `POST /v1/feedback` as text,
 * as a client with a feedback box would send it, so the session's last turn is judged as well.
 *
 * The probe: whenever the served policy version changes (checked after every session), the
 * held-out probe messages are sent as fresh one-message conversations with `X-Turn-Type: side`,
 * so the server records them but never judges or trains on them, and sampled as served (the
 * server's own defaults, like the sessions). A probe whose responses came from more than one
 * version (training publishes asynchronously) is repeated for the newest version.
 */
import { deriveSamplingSeed } from '../../core/seeded-random.js';
import type { SimulatedUser } from '../../builtin/user-preference.js';
import { answeringText, createExperimentPlan, probeSatisfied, userReply, type PlannedSession } from './experiment-plan.js';
import { isContextFullError, type CompletionResult, type ExperimentMessage, type PersonalizeClient, type TurnJudgingSummary } from './personalize-client.js';
import {
  successThreshold,
  type PersonalizeMethod,
  type PersonalizeProbe,
  type PersonalizeResult,
  type PersonalizeSession,
} from './personalize-result.js';
import { consecutiveCriterion, sessionsToSuccess } from './success-criteria.js';

export type PersonalizeProgress =
  | { kind: 'probe-started'; afterSession: number; attempt: number; size: number }
  | { kind: 'probe'; probe: PersonalizeProbe }
  | { kind: 'session'; session: PersonalizeSession; total: number; satisfiedSoFar: number; servedVersion: number; servedProbeRate: number }
  | { kind: 'wait'; afterSession: number; outcome: 'no-admin' | 'timed-out'; waitedMs: number };

export interface PersonalizeExperimentOptions {
  client: PersonalizeClient;
  user: SimulatedUser;
  method: PersonalizeMethod;
  seed: number;
  sessions: number;
  probeSize: number;
  /** Prefix of the session ids, so several runs against one server never share a session. */
  runId: string;
  /** Probe attempts before a probe that still mixes versions is accepted as it is (default 3). */
  maxProbeAttempts?: number;
  /**
   * After each session, wait until the server has judged it and trained on every batch that is
   * due (default true), as a user who takes a while between sessions gives it time to. Without
   * waiting, the count of sessions to success depends on how fast the client types.
   */
  waitForServer?: boolean;
  /** Longest wait after one session (default 10 minutes); the run goes on after it. */
  maxWaitMs?: number;
  /** Pause between backlog checks (default 250 ms). */
  waitPollMs?: number;
  /** Send the user's reply to each session's last response as feedback text (default false). */
  finalFeedback?: boolean;
  onProgress?: (progress: PersonalizeProgress) => void;
}

export async function runPersonalizeExperiment(options: PersonalizeExperimentOptions): Promise<PersonalizeResult> {
  const { client, user } = options;
  const plan = createExperimentPlan({ user, seed: options.seed, sessions: options.sessions, probeSize: options.probeSize });
  const maxProbeAttempts = options.maxProbeAttempts ?? 3;
  const report = options.onProgress ?? (() => undefined);
  const model = await client.modelName();

  async function probe(afterSession: number): Promise<PersonalizeProbe> {
    for (let attempt = 1; ; attempt += 1) {
      report({ kind: 'probe-started', afterSession, attempt, size: plan.probeMessages.length });
      const sessionId = `${options.runId}-probe-${afterSession}-${attempt}`;
      const versions = new Set<number>();
      let satisfied = 0;
      let incoherent = 0;
      let lastVersion = 0;
      for (const [index, message] of plan.probeMessages.entries()) {
        const result = await client.complete({
          messages: [{ role: 'user', content: message }],
          sessionId,
          turnType: 'side',
          sessionDone: index === plan.probeMessages.length - 1,
          // One seed per probe message, the same for every version: two versions' rates then differ
          // by what the weights do, not by which random draws each probe got.
          seed: deriveSamplingSeed(options.seed, 'personalize-sampling', 'probe', index),
        });
        const verdict = probeSatisfied(user, { text: result.content, finishReason: result.finishReason, answering: message });
        if (verdict.satisfied) satisfied += 1;
        if (verdict.incoherence !== null) incoherent += 1;
        versions.add(result.policyVersion);
        lastVersion = result.policyVersion;
      }
      if (versions.size === 1 || attempt >= maxProbeAttempts) {
        const size = plan.probeMessages.length;
        const entry = { policyVersion: lastVersion, afterSession, satisfactionRate: satisfied / size, satisfied, incoherent, size, mixedVersions: versions.size > 1 };
        report({ kind: 'probe', probe: entry });
        return entry;
      }
    }
  }

  async function runSession(planned: PlannedSession): Promise<{ session: PersonalizeSession; lastVersion: number }> {
    const sessionId = `${options.runId}-session-${planned.index}`;
    const messages: ExperimentMessage[] = [{ role: 'user', content: planned.firstMessage }];
    const turns = planned.followUps + 1;
    const turnIds: string[] = [];
    let firstResponseSatisfied = false;
    let firstVersion = 0;
    let lastVersion = 0;
    let responsesSatisfied = 0;
    let endedEarly = false;
    // The reply to the latest response, which only the next request would deliver: after the loop it is
    // the reply to the last response, or to the one before a follow-up that no longer fit.
    let undelivered: { turnId: string | null; text: string } | null = null;
    for (let turn = 0; turn < turns; turn += 1) {
      const last = turn === turns - 1;
      let result: CompletionResult;
      try {
        result = await client.complete({ messages, sessionId, turnType: 'main', sessionDone: last, seed: deriveSamplingSeed(options.seed, 'personalize-sampling', 'session', planned.index, turn) });
      } catch (error) {
        if (turn === 0 || !isContextFullError(error)) throw error;
        endedEarly = true;
        break;
      }
      const answering = answeringText(messages);
      const reply = userReply(user, { text: result.content, finishReason: result.finishReason, answering }, planned.random);
      if (turn === 0) {
        firstResponseSatisfied = reply.satisfied;
        firstVersion = result.policyVersion;
      }
      if (reply.satisfied) responsesSatisfied += 1;
      if (result.turnId !== null) turnIds.push(result.turnId);
      lastVersion = result.policyVersion;
      if (!last) messages.push({ role: 'assistant', content: result.content }, { role: 'user', content: reply.text });
      undelivered = { turnId: result.turnId, text: reply.text };
    }
    if (options.finalFeedback === true && undelivered?.turnId != null) await client.sendFeedback({ turnId: undelivered.turnId, text: undelivered.text });
    return {
      session: {
        index: planned.index,
        firstResponseSatisfied,
        policyVersion: firstVersion,
        sessionId,
        turnIds,
        responsesSatisfied,
        ...(endedEarly ? { endedEarly: 'context-full' as const } : {}),
      },
      lastVersion,
    };
  }

  const waitsForServer = options.waitForServer ?? true;
  // Set once the run gives up waiting; from then on sessions follow each other at once.
  let stoppedWaiting: PersonalizeResult['stoppedWaiting'] = null;
  async function waitForServer(afterSession: number): Promise<void> {
    const started = Date.now();
    const maxWaitMs = options.maxWaitMs ?? 600_000;
    const stopWaiting = (reason: 'no-admin' | 'timed-out') => {
      stoppedWaiting = { afterSession, reason };
      report({ kind: 'wait', afterSession, outcome: reason, waitedMs: Date.now() - started });
    };
    while (waitsForServer && stoppedWaiting === null) {
      const backlog = await client.backlog();
      if (backlog === null) return stopWaiting('no-admin');
      if (backlog.judgingPending === 0 && !backlog.trainingDue) return;
      // A server that never catches up (a judge that keeps failing) must not stall every session.
      if (Date.now() - started >= maxWaitMs) return stopWaiting('timed-out');
      await new Promise((resolve) => setTimeout(resolve, options.waitPollMs ?? 250));
    }
  }

  const probes: PersonalizeProbe[] = [await probe(0)];
  const sessions: PersonalizeSession[] = [];
  const judging = createJudgingLookup(client);
  for (const planned of plan.sessions) {
    const { session, lastVersion } = await runSession(planned);
    sessions.push(session);
    await waitForServer(planned.index);
    await judging.lookUp(sessions[0]?.turnIds[0]);
    const served = (await client.activePolicyVersion()) ?? lastVersion;
    if (served !== probes[probes.length - 1]?.policyVersion) probes.push(await probe(planned.index));
    report({
      kind: 'session',
      session,
      total: plan.sessions.length,
      satisfiedSoFar: sessions.filter((entry) => entry.firstResponseSatisfied).length,
      servedVersion: probes[probes.length - 1]?.policyVersion ?? served,
      servedProbeRate: probes[probes.length - 1]?.satisfactionRate ?? 0,
    });
  }

  const judged = judging.result();
  return {
    user: user.name,
    method: options.method,
    seed: options.seed,
    sessionsToSuccess: sessionsToSuccess(probes),
    consecutiveCriterion: consecutiveCriterion(sessions),
    baseProbeRate: probes[0]?.satisfactionRate ?? 0,
    successThreshold,
    probeSize: plan.probeMessages.length,
    model,
    judge: judged.judge,
    serverMethod: judged.sampleMethod,
    sampling: judged.sampling,
    finalFeedback: options.finalFeedback === true,
    stoppedWaiting,
    sessions,
    probe: probes,
  };
}

/**
 * Which judge scored the run and which method built its samples, read from the admin view of the
 * run's first turn; looked up after every session until both are known, since judging runs
 * behind the sessions. Without the admin view (no key, older server) both stay null.
 */
function createJudgingLookup(client: PersonalizeClient) {
  let found: TurnJudgingSummary | null = null;
  let unavailable = false;
  return {
    async lookUp(turnId: string | undefined): Promise<void> {
      if (unavailable || turnId === undefined || (found !== null && found.judge !== null && found.sampleMethod !== null)) return;
      const judging = await client.turnJudging(turnId);
      if (judging === null) unavailable = true;
      else found = judging;
    },
    result(): TurnJudgingSummary {
      return found ?? { judge: null, sampleMethod: null, sampling: null };
    },
  };
}
