/**
 * `clawrl bench training`: does training pause users? One run of a real `clawrl serve` with the
 * embedded engine measures chat latency twice with the same requests: idle, then while training
 * steps run back to back on the trainer worker (each step also publishes a version that the
 * sampler swaps in between requests). The figure is the ratio of the two, never an absolute
 * time: goal p99 during training ≤ 1.5 × idle p99 (on 2 cores: one for sampling, one for training).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { percentile } from './load-generator.js';
import { spawnReadyProcess } from './spawn-ready-process.js';

export interface TrainingLatencyBenchOptions {
  /** `dist/cli/main.js` of this build. */
  serverScript: string;
  /** `builtin:tiny` or a Hugging Face model folder. */
  model: string;
  trainParams: 'lora' | 'full';
  /** Sessions with feedback made into samples before measuring: the training phase's supply. */
  samples: number;
  /** Samples per step. */
  batchSize: number;
  /** Idle requests measured. */
  idleRequests: number;
  maxTokens: number;
  onProgress?: (message: string) => void;
}

export const defaultTrainingLatencyBenchOptions: Omit<TrainingLatencyBenchOptions, 'serverScript'> = {
  model: 'builtin:tiny',
  trainParams: 'lora',
  samples: 96,
  batchSize: 16,
  idleRequests: 100,
  maxTokens: 32,
};

export interface LatencyFigures {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

export interface TrainingLatencyBenchResult {
  model: string;
  trainParams: 'lora' | 'full';
  cores: number;
  idle: LatencyFigures;
  duringTraining: LatencyFigures & { steps: number; meanStepMs: number };
  /** During training ÷ idle. */
  ratio: { p50: number; p99: number };
  goal: { p99Ratio: number };
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function figures(latencies: number[]): LatencyFigures {
  return {
    requests: latencies.length,
    p50Ms: round(percentile(latencies, 0.5)),
    p99Ms: round(percentile(latencies, 0.99)),
    meanMs: round(latencies.reduce((sum, value) => sum + value, 0) / Math.max(latencies.length, 1)),
  };
}

async function call(baseUrl: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(new URL(route, baseUrl), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new ClawrlError('upstream_error', `${route} answered ${response.status}: ${JSON.stringify(json)}`);
  return { headers: response.headers, json };
}

export async function runTrainingLatencyBench(options: TrainingLatencyBenchOptions): Promise<TrainingLatencyBenchResult> {
  const progress = options.onProgress ?? (() => undefined);
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-bench-training-'));
  const server = await spawnReadyProcess(
    options.serverScript,
    ['serve', '--port', '0', '--data', data, '--engine', 'local', '--model', options.model, '--judge', 'rules', '--method', 'rl',
      '--train-params', options.trainParams, '--train-every', String(options.batchSize), '--max-staleness', '1000'],
    120_000,
  );
  try {
    const modelName = ((await call(server.url, '/v1/models')).json.data as Array<{ id: string }>)[0]?.id ?? options.model;
    let counter = 0;
    const chat = async (session: string): Promise<{ turnId: string; latencyMs: number }> => {
      counter += 1;
      const started = performance.now();
      const answer = await call(
        server.url,
        '/v1/chat/completions',
        { model: modelName, messages: [{ role: 'user', content: `What is ${counter} + ${counter % 7}?` }], max_tokens: options.maxTokens, temperature: 1 },
        { 'x-session-id': session },
      );
      return { turnId: answer.headers.get('x-clawrl-turn-id') ?? '', latencyMs: performance.now() - started };
    };

    // Training is automatic only at `batchSize` ready samples; pause it while the supply builds.
    await call(server.url, '/admin/training/pause', {});
    progress(`building ${options.samples} samples from sessions with feedback`);
    for (let index = 0; index < options.samples; index += 1) {
      const { turnId } = await chat(`bench-sample-${index}`);
      await call(server.url, '/v1/feedback', { turn_id: turnId, thumbs: index % 2 === 0 ? 'up' : 'down' });
    }
    for (let attempt = 0; ; attempt += 1) {
      const samples = (await call(server.url, '/admin/status')).json.samples as { ready: number };
      if (samples.ready >= options.samples) break;
      if (attempt > 600) throw new ClawrlError('internal_error', `only ${samples.ready} of ${options.samples} samples were built`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    progress(`idle: ${options.idleRequests} requests`);
    const idle: number[] = [];
    for (let index = 0; index < options.idleRequests; index += 1) idle.push((await chat(`bench-idle-${index}`)).latencyMs);

    progress('during training: steps back to back until the samples run out');
    await call(server.url, '/admin/training/resume', {});
    const stepTimes: number[] = [];
    let training = true;
    const driver = (async () => {
      try {
        for (;;) {
          const outcome = (await call(server.url, '/admin/training/step', {})).json as { kind: string; step?: { metrics: { stepMs: number } } };
          if (outcome.kind !== 'trained') break;
          stepTimes.push(outcome.step?.metrics.stepMs ?? 0);
        }
      } finally {
        training = false;
      }
    })();
    const during: number[] = [];
    for (let index = 0; training; index += 1) {
      const { latencyMs } = await chat(`bench-training-${index}`);
      // Only requests that ended while steps were still running count.
      if (training) during.push(latencyMs);
    }
    await driver;
    if (during.length < 10) throw new ClawrlError('internal_error', `only ${during.length} requests ran during training; raise the sample count`);
    const idleFigures = figures(idle);
    const duringFigures = figures(during);
    return {
      model: options.model,
      trainParams: options.trainParams,
      cores: availableParallelism(),
      idle: idleFigures,
      duringTraining: { ...duringFigures, steps: stepTimes.length, meanStepMs: round(stepTimes.reduce((sum, value) => sum + value, 0) / Math.max(stepTimes.length, 1)) },
      ratio: { p50: round(duringFigures.p50Ms / idleFigures.p50Ms, 2), p99: round(duringFigures.p99Ms / idleFigures.p99Ms, 2) },
      goal: { p99Ratio: 1.5 },
    };
  } finally {
    await server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}
