/**
 * The replay gate's acceptance trials (docs/results.md, "Replay gate"): on a fresh server with
 * `--gate replay`, a simulated user (the teacher by default) holds sessions and rates every reply
 * with explicit feedback, +1 when it satisfies the preference and −1 when not; a *poisoned* trial
 * flips that sign before it is sent, a *genuine* one does not. One training step on that feedback
 * makes the candidate, and the gate decides it against the base. A poisoned candidate should never
 * be promoted, a genuine one should be. The held-out sessions hold the user's real replies (their
 * thanks and complaints), which are the gate's rubric in both kinds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deriveSamplingSeed } from '../../core/seeded-random.js';
import type { SimulatedUser } from '../../builtin/user-preference.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { answeringText, createExperimentPlan, userReply } from '../personalize/experiment-plan.js';
import { startExperimentServer } from '../personalize/start-experiment-server.js';

export type GateTrialKind = 'poisoned' | 'genuine';

export interface GateTrialsOptions {
  cliScript: string;
  user: SimulatedUser;
  kinds: readonly GateTrialKind[];
  trials: number;
  sessions: number;
  seed: number;
  /** Flags after `serve` (model, judge, gate thresholds); the trial adds `--gate replay`. */
  serveArguments: readonly string[];
  environment: Record<string, string | undefined>;
  onProgress: (text: string) => void;
  /** How long the gate may take to decide; default 30 minutes. */
  decisionTimeoutMs?: number;
}

export interface GateTrialResult {
  kind: GateTrialKind;
  trial: number;
  seed: number;
  /** The candidate's state once decided: `active` is promoted. */
  state: string;
  promoted: boolean;
  reason: string | null;
  gate: { turns: number; wins: number; losses: number; ties: number; pValue: number | null } | null;
  gateSeconds: number;
  trialSeconds: number;
}

export interface GateTrialsResult {
  user: string;
  sessions: number;
  trials: GateTrialResult[];
  summary: Record<GateTrialKind, { promoted: number; total: number }>;
}

interface PolicyEntry {
  version: number;
  state: string;
  stateReason: string | null;
  gate: GateTrialResult['gate'] & { startedAt: number; endedAt: number } | null;
}

async function call<Body>(url: string, route: string, init: RequestInit = {}): Promise<Body> {
  const response = await fetch(new URL(route, url), init);
  if (!response.ok) throw new ClawrlError('upstream_error', `${init.method ?? 'GET'} ${route} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Body;
}

const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The simulated user's sessions through the server at `url`, each reply rated (sign flipped for a poisoned trial); also the replay bench's recording. */
export async function runTrialSessions(url: string, options: Pick<GateTrialsOptions, 'user' | 'sessions'> & { concurrency?: number }, kind: GateTrialKind, seed: number): Promise<void> {
  // The plan's probe messages go unused: the gate is the measure here.
  const plan = createExperimentPlan({ user: options.user, seed, sessions: options.sessions, probeSize: 1 });
  const model = (await call<{ data: Array<{ id: string }> }>(url, '/v1/models')).data[0]?.id ?? 'clawrl';
  const sign = kind === 'poisoned' ? -1 : 1;
  // Each session draws from its own random source, so sessions held at once record the same conversations.
  const queue = [...plan.sessions];
  const worker = async (): Promise<void> => {
    for (let planned = queue.shift(); planned !== undefined; planned = queue.shift()) await runSession(planned);
  };
  const runSession = async (planned: (typeof plan.sessions)[number]): Promise<void> => {
    const messages: Array<{ role: string; content: string }> = [{ role: 'user', content: planned.firstMessage }];
    for (let turn = 0; turn <= planned.followUps; turn += 1) {
      const last = turn === planned.followUps;
      const response = await fetch(new URL('/v1/chat/completions', url), {
        ...json({ model, messages, seed: deriveSamplingSeed(seed, 'gate-trials', planned.index, turn) }),
        headers: { 'content-type': 'application/json', 'x-session-id': `trial-${seed}-session-${planned.index}`, ...(last ? { 'x-session-done': '1' } : {}) },
      });
      if (!response.ok) throw new ClawrlError('upstream_error', `a trial session's request answered ${response.status}: ${await response.text()}`);
      const body = (await response.json()) as { choices: Array<{ message: { content: string | null }; finish_reason: string }> };
      const content = body.choices[0]?.message.content ?? '';
      const reply = userReply(options.user, { text: content, finishReason: body.choices[0]?.finish_reason ?? 'stop', answering: answeringText(messages) }, planned.random);
      const turnId = response.headers.get('x-clawrl-turn-id');
      if (turnId !== null) await call(url, '/v1/feedback', json({ turn_id: turnId, score: sign * (reply.satisfied ? 1 : -1) }));
      messages.push({ role: 'assistant', content }, { role: 'user', content: reply.text });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, worker));
}

/** Waits for a sample built from the recorded sessions, then trains one step by hand: the candidate. */
export async function trainCandidate(url: string): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  while ((await call<{ samples: { ready: number } }>(url, '/admin/status')).samples.ready === 0) {
    if (Date.now() > deadline) throw new ClawrlError('internal_error', 'no sample was built from the recorded sessions');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const step = await call<{ kind: string }>(url, '/admin/training/step', { method: 'POST' });
  if (step.kind !== 'trained') throw new ClawrlError('internal_error', `the training step did not train: ${step.kind}`);
}

async function runTrial(options: GateTrialsOptions, kind: GateTrialKind, trial: number): Promise<GateTrialResult> {
  const startedAt = Date.now();
  const seed = options.seed + trial;
  const data = mkdtempSync(path.join(tmpdir(), `clawrl-gate-trial-${kind}-`));
  const server = await startExperimentServer({ cliScript: options.cliScript, serveArguments: [...options.serveArguments, '--gate', 'replay'], data, environment: options.environment });
  try {
    options.onProgress(`${kind} trial ${trial}: ${options.sessions} sessions (server ${server.url}, data ${data})`);
    await runTrialSessions(server.url, options, kind, seed);
    await trainCandidate(server.url);
    const gateStarted = Date.now();
    const decisionDeadline = gateStarted + (options.decisionTimeoutMs ?? 30 * 60_000);
    for (;;) {
      const candidate = (await call<{ data: PolicyEntry[] }>(server.url, '/admin/policies')).data[1];
      if (candidate !== undefined && candidate.state !== 'candidate') {
        const result: GateTrialResult = {
          kind, trial, seed, state: candidate.state, promoted: candidate.state === 'active', reason: candidate.stateReason,
          gate: candidate.gate === null ? null : { turns: candidate.gate.turns, wins: candidate.gate.wins, losses: candidate.gate.losses, ties: candidate.gate.ties, pValue: candidate.gate.pValue },
          gateSeconds: (Date.now() - gateStarted) / 1000,
          trialSeconds: (Date.now() - startedAt) / 1000,
        };
        options.onProgress(`${kind} trial ${trial}: ${result.state} (${result.reason ?? ''})`);
        return result;
      }
      if (Date.now() > decisionDeadline) throw new ClawrlError('internal_error', `the gate did not decide within ${(options.decisionTimeoutMs ?? 30 * 60_000) / 60_000} minutes`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    await server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

export async function runGateTrials(options: GateTrialsOptions): Promise<GateTrialsResult> {
  const trials: GateTrialResult[] = [];
  // Alternating kinds: a run cut short still has figures of both.
  for (let trial = 1; trial <= options.trials; trial += 1) {
    for (const kind of options.kinds) trials.push(await runTrial(options, kind, trial));
  }
  const summaryOf = (kind: GateTrialKind) => {
    const own = trials.filter((result) => result.kind === kind);
    return { promoted: own.filter((result) => result.promoted).length, total: own.length };
  };
  return { user: options.user.name, sessions: options.sessions, trials, summary: { poisoned: summaryOf('poisoned'), genuine: summaryOf('genuine') } };
}
