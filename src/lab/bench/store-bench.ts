/**
 * `clawrl bench store`: the record stores side by side in one run, on agent-shaped traffic.
 *
 * Recording: concurrent multi-turn sessions, each request doing what the gateway does for a main
 * turn (touch the session, find its last turn, link that turn's next state, record the new turn)
 * with OpenClaw's shape: a ~40 KB system prompt (~10k tokens) and a dozen tool schemas shared by
 * every session, and a conversation that grows turn by turn, so prefixes are long and shared.
 * Claiming: one trainer leases ready samples in batches until none is left, each sample carrying
 * its turn's full prompt and response ids and rollout log-probs, as training reads them.
 *
 * Targets run phase by phase in turn, so machine noise hits them alike.
 */
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { NewTurn } from '../../spec/records.js';
import { percentile } from './load-generator.js';

export interface StoreBenchTarget {
  name: 'sqlite' | 'postgres';
  /** A fresh, empty store. */
  open: () => Promise<RecordStore>;
  /** Removes what `open` created, after the store is closed. */
  cleanup: () => Promise<void>;
}

export interface StoreFigures {
  turnsPerSecond: number;
  samplesClaimedPerSecond: number;
  /** One request's store work (touch, link, record), as the gateway waits for it before `[DONE]`. */
  turnWriteMs: { p50: number; p99: number };
  turns: number;
  samplesClaimed: number;
}

export interface StoreBenchResult {
  sqlite: StoreFigures;
  /** Null when Postgres could not be reached; `postgresUnavailable` says why. */
  postgres: StoreFigures | null;
  postgresUnavailable: string | null;
  /** Postgres over SQLite; null without Postgres figures. */
  ratio: { turnsPerSecond: number; samplesClaimedPerSecond: number } | null;
  workload: StoreBenchWorkload;
}

export interface StoreBenchWorkload {
  sessions: number;
  turnsPerSession: number;
  /** Sessions recording at the same time. */
  concurrency: number;
  systemPromptTokens: number;
  claimBatch: number;
}

export const defaultStoreBenchWorkload: StoreBenchWorkload = {
  sessions: 48,
  turnsPerSession: 16,
  concurrency: 8,
  systemPromptTokens: 10_000,
  claimBatch: 16,
};

export const quickStoreBenchWorkload: StoreBenchWorkload = { ...defaultStoreBenchWorkload, sessions: 8, turnsPerSession: 4 };

export interface StoreBenchOptions {
  workload: StoreBenchWorkload;
  sqlite: StoreBenchTarget;
  /** A target, or why there is none. */
  postgres: StoreBenchTarget | { unavailable: string };
  onProgress?: (message: string) => void;
}

const systemPrompt: ChatMessage = {
  role: 'system',
  content: Array.from(
    { length: 160 },
    (_, index) =>
      `## Section ${index}\nYou are a personal assistant running inside OpenClaw. Use tools when they help, keep ` +
      'answers short, respect the workspace rules, never reveal secrets, and ask before destructive actions.',
  ).join('\n'),
};

const tools: ToolDefinition[] = Array.from({ length: 12 }, (_, index) => ({
  name: `tool_${index}`,
  description: `Tool number ${index}: reads, searches or edits files inside the workspace.`,
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
    required: ['path'],
  },
}));

/** Deterministic token ids, so both stores receive identical turns. */
function tokens(count: number, seed: number): number[] {
  return Array.from({ length: count }, (_, position) => 1_000 + ((seed * 7_919 + position * 104_729) % 150_000));
}

interface SessionScript {
  id: string;
  turns: NewTurn[];
}

function scriptSession(workload: StoreBenchWorkload, sessionIndex: number): SessionScript {
  const id = `bench-session-${sessionIndex}`;
  const turns: NewTurn[] = [];
  let messages: ChatMessage[] = [systemPrompt];
  let prompt = tokens(workload.systemPromptTokens, 0);
  for (let index = 0; index < workload.turnsPerSession; index += 1) {
    const seed = sessionIndex * 1_000 + index;
    // Every third turn answers a tool call, as agents' turns alternate between users and tools.
    const incoming: ChatMessage =
      index % 3 === 2
        ? { role: 'tool', content: `file contents ${seed}: ${'lorem ipsum '.repeat(40)}`, toolCallId: `call_${seed - 1}` }
        : { role: 'user', content: `[session ${sessionIndex}] request ${index}: please check the workspace and report.` };
    messages = [...messages, incoming];
    prompt = [...prompt, ...tokens(incoming.role === 'tool' ? 160 : 40, seed)];
    const responseTokenIds = tokens(index % 3 === 1 ? 30 : 120, seed + 500_000);
    const response: ChatMessage =
      index % 3 === 1
        ? { role: 'assistant', content: '', toolCalls: [{ id: `call_${seed}`, name: 'tool_3', arguments: `{"path":"notes/${seed}.md"}` }] }
        : { role: 'assistant', content: `Done with request ${index}. ${'Everything checked and in order. '.repeat(12)}` };
    turns.push({
      id: `${id}-turn-${index}`,
      sessionId: id,
      type: 'main',
      status: 'completed',
      trainable: true,
      tenant: null, user: null,
      model: 'bench-model',
      policyVersion: 0,
      messages,
      tools,
      sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
      promptTokenIds: prompt,
      responseTokenIds,
      logprobs: responseTokenIds.map((id, position) => -((id % 97) + position) / 50),
      response,
      finishReason: response.toolCalls === undefined ? 'stop' : 'tool_calls',
      timings: { startedAt: seed, firstTokenAt: seed + 1, endedAt: seed + 2 },
      error: null,
      replyKey: `reply-${seed}`,
    });
    messages = [...messages, response];
    prompt = [...prompt, ...responseTokenIds];
  }
  return { id, turns };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/** Records every session's turns, `concurrency` sessions at a time; returns per-turn latencies. */
async function recordSessions(store: RecordStore, scripts: SessionScript[], concurrency: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const runner = async () => {
    for (let script = scripts[next++]; script !== undefined; script = scripts[next++]) {
      for (const turn of script.turns) {
        const started = performance.now();
        await store.upsertSession({ id: script.id, tenant: null, user: null, at: turn.timings.startedAt });
        const previous = await store.getLastMainTurn(script.id);
        if (previous !== null && !previous.linked) {
          await store.linkNextState(previous.id, turn.messages.slice(-1), turn.timings.startedAt);
        }
        await store.recordTurn(turn);
        latencies.push(performance.now() - started);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, runner));
  return latencies;
}

async function addSamples(store: RecordStore, scripts: SessionScript[]): Promise<void> {
  for (const turn of scripts.flatMap((script) => script.turns)) {
    const length = turn.responseTokenIds.length;
    await store.recordSample({
      id: `sample-${turn.id}`,
      turnId: turn.id,
      method: 'rl',
      status: 'ready',
      dropReason: null,
      policyVersion: 0,
      judgementId: null,
      feedbackId: null,
      score: 1,
      hint: null,
      group: null, lossMask: Array<number>(length).fill(1),
      distillationGaps: null,
      teacherLogprobs: null,
      support: null,
      createdAt: turn.timings.endedAt,
    });
  }
}

async function claimAll(store: RecordStore, batch: number): Promise<number> {
  let claimed = 0;
  for (;;) {
    const samples = await store.claimSamplesForTraining({ limit: batch, leaseMs: 3_600_000, now: 1, workerId: 'bench-trainer' });
    if (samples.length === 0) return claimed;
    claimed += samples.length;
  }
}

export async function runStoreBench(options: StoreBenchOptions): Promise<StoreBenchResult> {
  const { workload } = options;
  const progress = options.onProgress ?? (() => undefined);
  const scripts = Array.from({ length: workload.sessions }, (_, index) => scriptSession(workload, index));
  const opened: { target: StoreBenchTarget; store: RecordStore }[] = [];
  const figures = new Map<string, StoreFigures>();
  let postgresUnavailable = 'unavailable' in options.postgres ? options.postgres.unavailable : null;
  try {
    opened.push({ target: options.sqlite, store: await options.sqlite.open() });
    if (!('unavailable' in options.postgres)) {
      const target = options.postgres;
      try {
        opened.push({ target, store: await target.open() });
      } catch (error) {
        // Reported, not thrown: SQLite's figures still stand on their own.
        postgresUnavailable = error instanceof Error ? error.message : String(error);
        progress(`postgres unavailable: ${postgresUnavailable}`);
      }
    }
    for (const { target, store } of opened) {
      progress(`${target.name}: recording ${workload.sessions} sessions × ${workload.turnsPerSession} turns`);
      const started = performance.now();
      const latencies = await recordSessions(store, scripts, workload.concurrency);
      const seconds = (performance.now() - started) / 1000;
      figures.set(target.name, {
        turnsPerSecond: round(latencies.length / seconds),
        samplesClaimedPerSecond: 0,
        turnWriteMs: { p50: round(percentile(latencies, 0.5)), p99: round(percentile(latencies, 0.99)) },
        turns: latencies.length,
        samplesClaimed: 0,
      });
      await addSamples(store, scripts);
    }
    for (const { target, store } of opened) {
      progress(`${target.name}: claiming samples in batches of ${workload.claimBatch}`);
      const started = performance.now();
      const claimed = await claimAll(store, workload.claimBatch);
      const seconds = (performance.now() - started) / 1000;
      const entry = figures.get(target.name) as StoreFigures;
      figures.set(target.name, { ...entry, samplesClaimedPerSecond: round(claimed / seconds), samplesClaimed: claimed });
    }
  } finally {
    for (const { target, store } of opened) {
      await store.close();
      await target.cleanup();
    }
  }
  const sqlite = figures.get('sqlite') as StoreFigures;
  const postgres = figures.get('postgres') ?? null;
  return {
    sqlite,
    postgres,
    postgresUnavailable,
    ratio:
      postgres === null
        ? null
        : {
            turnsPerSecond: round(postgres.turnsPerSecond / sqlite.turnsPerSecond),
            samplesClaimedPerSecond: round(postgres.samplesClaimedPerSecond / sqlite.samplesClaimedPerSecond),
          },
    workload,
  };
}
