/**
 * `clawrl bench replay`: how long the replay gate takes to replay recorded sessions against a
 * candidate (goal: 200 sessions on the built-in model in at most 10 minutes on 2 cores;
 * docs/benchmarks.md). A fresh `clawrl serve` records the simulated user's sessions (the
 * teacher's, each reply rated) and trains on them as they come; its first version is the
 * candidate. Then the server stops and the measured part runs on what it recorded: the candidate
 * and the incumbent each answer every recorded main turn that has a next state or feedback, and
 * the judge scores both answers, as the gate does beside serving (`replay`, built by the composition root with the engine and judge
 * `clawrl serve --gate replay` builds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { SimulatedUser } from '../../builtin/user-preference.js';
import { runTrialSessions } from '../gate-trials/run-gate-trials.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { startExperimentServer } from '../personalize/start-experiment-server.js';

export interface ReplayBenchOptions {
  cliScript: string;
  model: string;
  user: SimulatedUser;
  /** Sessions recorded, and replayed. */
  sessions: number;
  seed: number;
  environment: Record<string, string | undefined>;
  /** Replays version 1 (the candidate) against 0 on the store recorded in `data`, every replayable turn of the newest `sessions` sessions. */
  replay: (data: string, sessions: number) => Promise<{ sessions: number; turns: number; decision: string }>;
  onProgress: (text: string) => void;
}

export interface ReplayBenchResult {
  model: string;
  cores: number;
  recordedSessions: number;
  replayedSessions: number;
  /** Turns replayed: each answered by both versions and judged twice. */
  turns: number;
  recordSeconds: number;
  /** Wall time of the replay, loading the engine and staging the candidate included. */
  replaySeconds: number;
  /** CPU time the replay took (all threads); below the wall time when others share the cores. */
  replayCpuSeconds: number;
  /** The machine's one-minute load average when the replay ended: above its cores, others were running too. */
  loadAverage: number;
  secondsPerTurn: number;
  /** The gate's rule on this evidence (not the point here: the figure is the time). */
  decision: string;
  goal: { sessions: number; seconds: number };
  /** Whether the replay took at most the goal's time, scaled to the goal's 200 sessions when fewer were replayed. */
  meetsGoal: boolean;
}

export const replayBenchGoal = { sessions: 200, seconds: 600 };

/** Waits until the server committed a step: version 1, the candidate replayed against the base. */
async function firstTrainingStep(url: string): Promise<void> {
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    const response = await fetch(new URL('/admin/status', url));
    const status = (await response.json()) as { trainSteps: number };
    if (status.trainSteps >= 1) return;
    if (Date.now() > deadline) throw new ClawrlError('internal_error', 'the server trained no step on the recorded sessions within 30 minutes');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

export async function runReplayBench(options: ReplayBenchOptions): Promise<ReplayBenchResult> {
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-replay-bench-'));
  try {
    const recordStarted = performance.now();
    const server = await startExperimentServer({
      cliScript: options.cliScript,
      // Small steps that train as the sessions come: one step on every sample can outlast an HTTP request's time-out on a busy machine.
      serveArguments: ['--model', options.model, '--method', 'rl', '--judge', 'rules', '--train-every', '16'],
      data,
      environment: options.environment,
    });
    try {
      options.onProgress(`recording ${options.sessions} sessions of ${options.user.name} (server ${server.url})`);
      await runTrialSessions(server.url, { ...options, concurrency: 8 }, 'genuine', options.seed);
      options.onProgress('waiting for the candidate (the first training step)');
      await firstTrainingStep(server.url);
    } finally {
      await server.stop();
    }
    const recordSeconds = (performance.now() - recordStarted) / 1000;
    options.onProgress(`replaying ${options.sessions} sessions against the candidate`);
    const replayStarted = performance.now();
    // This process's CPU time, its engine's worker threads included: what the replay costs on a machine others share.
    const cpuStarted = process.cpuUsage();
    const replayed = await options.replay(data, options.sessions);
    const replaySeconds = (performance.now() - replayStarted) / 1000;
    const cpu = process.cpuUsage(cpuStarted);
    const replayCpuSeconds = (cpu.user + cpu.system) / 1e6;
    const scaledSeconds = replayed.sessions === 0 ? Number.POSITIVE_INFINITY : (replaySeconds * replayBenchGoal.sessions) / replayed.sessions;
    return {
      model: options.model,
      cores: availableParallelism(),
      recordedSessions: options.sessions,
      replayedSessions: replayed.sessions,
      turns: replayed.turns,
      recordSeconds: Math.round(recordSeconds * 10) / 10,
      replaySeconds: Math.round(replaySeconds * 10) / 10,
      replayCpuSeconds: Math.round(replayCpuSeconds * 10) / 10,
      loadAverage: Math.round((loadavg()[0] ?? 0) * 10) / 10,
      secondsPerTurn: replayed.turns === 0 ? 0 : Math.round((replaySeconds / replayed.turns) * 1000) / 1000,
      decision: replayed.decision,
      goal: replayBenchGoal,
      meetsGoal: scaledSeconds <= replayBenchGoal.seconds,
    };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

export function formatReplayBench(result: ReplayBenchResult): string {
  return [
    `${result.model}, ${result.cores} cores: ${result.recordedSessions} recorded sessions (${result.recordSeconds} s to record and train the candidate)`,
    `replayed ${result.replayedSessions} sessions, ${result.turns} turns (both versions answer, the judge scores both): ${result.replaySeconds} s, ${result.secondsPerTurn} s a turn; ${result.replayCpuSeconds} CPU s (load average ${result.loadAverage})`,
    `goal: ${result.goal.sessions} sessions in at most ${result.goal.seconds} s — ${result.meetsGoal ? 'met' : 'missed'}; the gate's decision on this evidence: ${result.decision}`,
  ].join('\n');
}
