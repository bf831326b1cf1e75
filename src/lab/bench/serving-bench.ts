/**
 * `clawrl bench serving`: the embedded engine as users feel it, through the real server
 * (`clawrl serve` on the built-in model), in one run:
 *
 * - tokens/s over all streams at several concurrencies (goal: at 8, at least 4× concurrency 1);
 * - time to first token of an agent session's second turn against its first (goal: at most 0.2×),
 *   each session with its own system prompt so no trial reuses another's prefix;
 * - the time per output token of a running stream while a long prompt arrives;
 * - the same throughput, and the same time per output token, while the trainer steps.
 *
 * The server samples at temperature 1 with a seed per request, so every run asks the same work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConversation } from './agent-request-shapes.js';
import { percentile } from './load-generator.js';
import { spawnReadyProcess, type ReadyProcess } from './spawn-ready-process.js';

export interface ServingBenchOptions {
  /** `dist/cli/main.js` of this build. */
  cliScript: string;
  concurrencies: number[];
  /** Tokens each throughput stream asks for. */
  streamTokens: number;
  /** Agent sessions whose first and second turns are timed. */
  agentSessions: number;
  onProgress?: (message: string) => void;
}

export const defaultServingBenchOptions: Omit<ServingBenchOptions, 'cliScript'> = { concurrencies: [1, 4, 8], streamTokens: 48, agentSessions: 3 };

export interface ThroughputFigure {
  concurrency: number;
  tokensPerSecond: number;
  completionTokens: number;
  seconds: number;
}

export interface ServingBenchResult {
  model: string;
  throughput: ThroughputFigure[];
  /** Tokens/s at the highest concurrency over concurrency 1 (goal ≥ 4). */
  concurrencyScaling: number | null;
  agentSession: { firstTurnTtftMs: number[]; secondTurnTtftMs: number[]; secondOverFirst: number | null };
  whileLongPromptArrives: { timePerOutputTokenMs: { p50: number; p99: number }; longPromptTtftMs: number };
  /** Each figure measured from a moment a training step was running (`stepRunningAtStart`). */
  whileTraining: {
    throughput: (ThroughputFigure & { stepRunningAtStart: boolean })[];
    /** A running stream's time per output token while a long prompt arrives, from a moment a step was running. */
    whileLongPromptArrives: ServingBenchResult['whileLongPromptArrives'] & { stepRunningAtStart: boolean };
    trainingStepsDuring: number;
  } | null;
  goal: { concurrencyScaling: number; secondTurnTtftRatio: number };
}

interface StreamTiming {
  firstTokenMs: number;
  /** Time of each content chunk after the request started. */
  chunkTimesMs: number[];
  completionTokens: number;
  text: string;
}

const median = (values: number[]) => percentile(values, 0.5);

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** One streamed completion, timed chunk by chunk. */
async function streamCompletion(url: string, body: Record<string, unknown>): Promise<StreamTiming> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, model: 'builtin:tiny', stream: true, stream_options: { include_usage: true } }),
  });
  if (!response.ok || response.body === null) throw new Error(`serving bench: ${response.status} ${await response.text()}`);
  const timing: StreamTiming = { firstTokenMs: Number.NaN, chunkTimesMs: [], completionTokens: 0, text: '' };
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const part of response.body) {
    buffered += decoder.decode(part as Uint8Array, { stream: true });
    const events = buffered.split('\n\n');
    buffered = events.pop() ?? '';
    for (const event of events) {
      const data = event.replace(/^data: /, '').trim();
      if (data === '' || data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: { completion_tokens: number } | null };
      const content = chunk.choices?.[0]?.delta?.content;
      if (content !== undefined && content !== '') {
        const at = performance.now() - started;
        if (Number.isNaN(timing.firstTokenMs)) timing.firstTokenMs = at;
        timing.chunkTimesMs.push(at);
        timing.text += content;
      }
      if (chunk.usage) timing.completionTokens = chunk.usage.completion_tokens;
    }
  }
  return timing;
}

async function throughputAt(url: string, concurrency: number, tokens: number, seedBase: number): Promise<ThroughputFigure> {
  const started = performance.now();
  const streams = await Promise.all(
    Array.from({ length: concurrency }, (_, index) =>
      streamCompletion(url, {
        messages: [{ role: 'user', content: `Write a long story about the number ${seedBase + index}.` }],
        max_tokens: tokens,
        temperature: 1,
        seed: seedBase + index,
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const completionTokens = streams.reduce((total, stream) => total + stream.completionTokens, 0);
  return { concurrency, tokensPerSecond: round(completionTokens / seconds), completionTokens, seconds: round(seconds, 3) };
}

async function agentSessionTtft(url: string, session: number): Promise<{ first: number; second: number }> {
  const conversation = createConversation('agent', `bench-${session}`);
  // The session's own system prompt head, so no earlier trial's kept prefix serves it.
  const withOwnSystem = (body: string) => {
    const parsed = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
    const [system, ...rest] = parsed.messages;
    return { ...parsed, messages: [{ role: 'system', content: `Session ${session} of the serving benchmark. ${String(system?.content ?? '')}` }, ...rest], max_tokens: 8, temperature: 1, seed: session };
  };
  const first = await streamCompletion(url, withOwnSystem(conversation.next(true)));
  conversation.reply(first.text);
  const second = await streamCompletion(url, withOwnSystem(conversation.next(true)));
  return { first: first.firstTokenMs, second: second.firstTokenMs };
}

async function whileLongPromptArrives(url: string): Promise<ServingBenchResult['whileLongPromptArrives']> {
  const running = streamCompletion(url, { messages: [{ role: 'user', content: 'Tell a long story.' }], max_tokens: 96, temperature: 1, seed: 1 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const long = JSON.parse(createConversation('agent', 'long-prompt').next(true)) as Record<string, unknown>;
  const arriving = streamCompletion(url, { ...long, max_tokens: 4, temperature: 1, seed: 2 });
  const [stream, longStream] = await Promise.all([running, arriving]);
  const gaps = stream.chunkTimesMs.slice(1).map((at, index) => at - (stream.chunkTimesMs[index] ?? at));
  return { timePerOutputTokenMs: { p50: round(median(gaps)), p99: round(percentile(gaps, 0.99)) }, longPromptTtftMs: round(longStream.firstTokenMs) };
}

async function startServer(options: ServingBenchOptions, training: boolean): Promise<{ server: ReadyProcess; data: string }> {
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-serving-bench-'));
  const server = await spawnReadyProcess(options.cliScript, ['serve', '--port', '0', '--data', data, ...(training ? ['--train-every', '2'] : ['--no-train'])], 60_000);
  return { server, data };
}

async function trainingStatus(url: string): Promise<{ steps: number; stepping: boolean }> {
  const status = (await (await fetch(`${url}/admin/status`)).json()) as { trainSteps: number; training?: { training?: boolean } };
  return { steps: status.trainSteps, stepping: status.training?.training === true };
}

/** Waits (up to 60 s) until a training step is running, so the streams measured share the cores with it. */
async function untilStepping(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !(await trainingStatus(url)).stepping) await new Promise((resolve) => setTimeout(resolve, 50));
}

export async function runServingBench(options: ServingBenchOptions): Promise<ServingBenchResult> {
  const progress = options.onProgress ?? (() => undefined);
  const { server, data } = await startServer(options, false);
  let result: Omit<ServingBenchResult, 'whileTraining'>;
  try {
    await throughputAt(server.url, 1, 8, 0);
    const throughput: ThroughputFigure[] = [];
    for (const concurrency of options.concurrencies) {
      progress(`throughput at concurrency ${concurrency}`);
      throughput.push(await throughputAt(server.url, concurrency, options.streamTokens, 100 * concurrency));
    }
    progress(`agent sessions: first and second turn, ${options.agentSessions} sessions`);
    const sessions = [];
    for (let session = 1; session <= options.agentSessions; session += 1) sessions.push(await agentSessionTtft(server.url, session));
    const firstTurnTtftMs = sessions.map((entry) => round(entry.first));
    const secondTurnTtftMs = sessions.map((entry) => round(entry.second));
    progress('a running stream while a long prompt arrives');
    const lowest = throughput[0];
    const highest = throughput.at(-1);
    result = {
      model: 'builtin:tiny',
      throughput,
      concurrencyScaling: lowest !== undefined && highest !== undefined && throughput.length > 1 ? round(highest.tokensPerSecond / lowest.tokensPerSecond) : null,
      agentSession: { firstTurnTtftMs, secondTurnTtftMs, secondOverFirst: round(median(secondTurnTtftMs) / median(firstTurnTtftMs), 3) },
      whileLongPromptArrives: await whileLongPromptArrives(server.url),
      goal: { concurrencyScaling: 4, secondTurnTtftRatio: 0.2 },
    };
  } finally {
    await server.stop();
    rmSync(data, { recursive: true, force: true });
  }
  progress('throughput while the trainer steps');
  const trained = await startServer(options, true);
  try {
    // Feedback on a dozen turns queues samples, so steps run while the streams are measured.
    for (let index = 0; index < 12; index += 1) {
      const response = await fetch(`${trained.server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'builtin:tiny', max_tokens: 16, messages: [{ role: 'user', content: `What is ${index} + 2?` }] }),
      });
      const turnId = response.headers.get('x-clawrl-turn-id');
      await response.text();
      await fetch(`${trained.server.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: turnId, thumbs: index % 2 === 0 ? 'up' : 'down' }) });
    }
    const throughput: (ThroughputFigure & { stepRunningAtStart: boolean })[] = [];
    let trainingStepsDuring = 0;
    for (const concurrency of [options.concurrencies[0] ?? 1, options.concurrencies.at(-1) ?? 8]) {
      await untilStepping(trained.server.url);
      const { steps: before, stepping } = await trainingStatus(trained.server.url);
      throughput.push({ ...(await throughputAt(trained.server.url, concurrency, options.streamTokens, 1000 * concurrency)), stepRunningAtStart: stepping });
      trainingStepsDuring += (await trainingStatus(trained.server.url)).steps - before;
    }
    await untilStepping(trained.server.url);
    const { steps: before, stepping } = await trainingStatus(trained.server.url);
    const longPrompt = { ...(await whileLongPromptArrives(trained.server.url)), stepRunningAtStart: stepping };
    trainingStepsDuring += (await trainingStatus(trained.server.url)).steps - before;
    return { ...result, whileTraining: { throughput, whileLongPromptArrives: longPrompt, trainingStepsDuring } };
  } finally {
    await trained.server.stop();
    rmSync(trained.data, { recursive: true, force: true });
  }
}
