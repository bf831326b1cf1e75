/**
 * The replay gate's evaluation (docs/training.md, "The replay gate"): the candidate and the
 * incumbent each answer the recorded prompts of held-out main turns, the judge scores each answer
 * against what the recording knows, and `decideReplayGate` (core) decides.
 *
 * The evaluation set: the newest `sessions` sessions in the held-out slice (`inSessionCohort('held-out',
 * id, heldOutShare)`, whose turns are never trained on) that have a main turn with a next state or
 * feedback, those turns newest first, at most `maxTurns`. With `heldOutShare` 0 (no gate configured) the newest
 * sessions stand in, and the evidence says they were not held out.
 *
 * The judge sees the recorded prompt, the new answer, and as the next state what followed the
 * recorded answer, then the user's feedback text and hint (the rubric). Both versions sample with
 * the recorded sampling options and the same seed per turn, so a pair differs by the weights alone.
 * Neither answer reaches a user: the candidate is named by `policyVersion` on a staged engine.
 */
import { inSessionCohort } from '../core/session-cohort.js';
import { deriveSamplingSeed } from '../core/seeded-random.js';
import { decideReplayGate, defaultReplayGateRule, preferenceOf, type ReplayGateRuleOptions } from '../core/replay-gate-rule.js';
import type { ChatMessage } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine, PolicyVersion } from '../spec/inference-engine.js';
import type { Judge } from '../spec/judge.js';
import type { PolicyGateEvidence, PolicyGateItem } from '../spec/policy-version-state.js';
import type { RecordReads } from '../spec/record-reads.js';
import type { FeedbackRecord, TurnRecord } from '../spec/records.js';

export interface ReplayGateOptions {
  store: Pick<RecordReads, 'listSessions' | 'getTurns' | 'dashboard'>;
  engine: InferenceEngine;
  judge: Judge;
  now: () => number;
  /** The share of sessions held out of training (0..1); 0 replays the newest sessions instead. */
  heldOutShare: number;
  rule?: ReplayGateRuleOptions;
  /** Held-out sessions replayed; default 20. */
  sessions?: number;
  /** Most turns replayed; default 40. */
  maxTurns?: number;
  /** Turns replayed at once, so their answers and judgements share the engine's batch; default 1. */
  concurrency?: number;
}

export interface ReplayGateRun {
  candidate: PolicyVersion;
  incumbent: PolicyVersion;
  /** Overrides `ReplayGateOptions.sessions`. */
  sessions?: number;
  signal?: AbortSignal;
}

/** Sessions read to find held-out ones: ten times the sessions wanted at a 10 % share. */
const sessionScanLimit = 2_000;

/** What followed the recorded answer, then the user's feedback text and hint: the judge's rubric. */
function rubricOf(turn: TurnRecord, feedback: FeedbackRecord | null): ChatMessage[] {
  const rubric: ChatMessage[] = [...(turn.nextState ?? [])];
  if (feedback?.text != null && feedback.text.trim() !== '') rubric.push({ role: 'user', content: feedback.text });
  if (feedback?.hint != null && feedback.hint.trim() !== '') rubric.push({ role: 'user', content: `[user's hint / instruction]\n${feedback.hint}` });
  return rubric;
}

async function answerOf(engine: InferenceEngine, turn: TurnRecord, version: PolicyVersion, signal: AbortSignal): Promise<ChatMessage> {
  const events = engine.generate(
    {
      messages: turn.messages,
      tools: turn.tools,
      toolChoice: turn.tools.length === 0 ? 'none' : 'auto',
      sampling: { ...turn.sampling, n: 1, topLogprobs: 0, seed: deriveSamplingSeed('replay-gate', turn.id) },
      policyVersion: version,
    },
    signal,
  );
  for await (const event of events) {
    if (event.type === 'end') {
      const choice = event.result.choices[0];
      if (choice === undefined) break;
      return choice.message;
    }
  }
  throw new ClawrlError('upstream_error', `the engine ended the replay of turn ${turn.id} on version ${version} without an answer`, { retryable: true });
}

/** The judge's score of an answer: the mean of its readable votes (finer than their majority), 0 when none was readable. */
async function scoreOf(judge: Judge, turn: TurnRecord, answer: ChatMessage, rubric: ChatMessage[], signal: AbortSignal): Promise<number> {
  const result = await judge.judge({ context: turn.messages, response: answer, nextState: rubric, wantHint: false }, signal);
  const verdicts = result.votes.flatMap((vote) => (vote.kind === 'verdict' && vote.score !== null ? [vote.score] : []));
  if (verdicts.length === 0) return result.score ?? 0;
  return verdicts.reduce<number>((sum, score) => sum + score, 0) / verdicts.length;
}

/**
 * The turns the gate replays, newest first, with their feedback: from the newest held-out sessions
 * that have a turn to replay. Sessions are read a page at a time until enough of them have one, so
 * the newest sessions that have none yet (one turn, no feedback: a conversation just begun, a
 * one-off request) do not crowd out the ones that can be judged.
 */
async function evaluationSet(options: ReplayGateOptions, sessionsWanted: number): Promise<{ sessions: number; turns: { turn: TurnRecord; feedback: FeedbackRecord | null }[] }> {
  const maxTurns = options.maxTurns ?? 40;
  const candidates = (await options.store.listSessions({ limit: sessionScanLimit })).filter(
    (session) => session.turnIds.length > 0 && (options.heldOutShare === 0 || inSessionCohort('held-out', session.id, options.heldOutShare)),
  );
  const turns: { turn: TurnRecord; feedback: FeedbackRecord | null }[] = [];
  const used = new Set<string>();
  for (let start = 0; start < candidates.length && used.size < sessionsWanted && turns.length < maxTurns; start += sessionsWanted) {
    const page = candidates.slice(start, start + sessionsWanted);
    const turnIds = page.flatMap((session) => [...session.turnIds].reverse());
    const judgings = new Map((await options.store.dashboard.turnJudgings(turnIds)).map((judging) => [judging.turnId, judging]));
    const read = new Map((await options.store.getTurns(turnIds)).map((turn) => [turn.id, turn]));
    for (const session of page) {
      if (used.size >= sessionsWanted) break;
      const replayable = [...session.turnIds]
        .reverse()
        .flatMap((id) => {
          const turn = read.get(id);
          return turn === undefined ? [] : [turn];
        })
        .filter((turn) => turn.status === 'completed' && (turn.nextState !== null || judgings.get(turn.id)?.feedback != null));
      if (replayable.length === 0) continue;
      used.add(session.id);
      turns.push(...replayable.map((turn) => ({ turn, feedback: judgings.get(turn.id)?.feedback ?? null })));
    }
  }
  const kept = turns.slice(0, maxTurns);
  return { sessions: new Set(kept.map(({ turn }) => turn.sessionId)).size, turns: kept };
}

/** Replays, judges and decides; the evidence says what was replayed, the scores, the rule and the decision. */
export async function runReplayGate(options: ReplayGateOptions, run: ReplayGateRun): Promise<PolicyGateEvidence> {
  const startedAt = options.now();
  const signal = run.signal ?? new AbortController().signal;
  const { sessions, turns } = await evaluationSet(options, run.sessions ?? options.sessions ?? 20);
  const items: PolicyGateItem[] = new Array<PolicyGateItem>(turns.length);
  const replayOne = async ({ turn, feedback }: (typeof turns)[number]): Promise<PolicyGateItem> => {
    const rubric = rubricOf(turn, feedback);
    // A turn closed by feedback alone has no next state; the judge needs one, so the score stands in.
    const nextState = rubric.length > 0 ? rubric : [{ role: 'user' as const, content: `(the user rated the reply ${feedback?.score ?? 0})` }];
    const [candidateAnswer, incumbentAnswer] = await Promise.all([answerOf(options.engine, turn, run.candidate, signal), answerOf(options.engine, turn, run.incumbent, signal)]);
    const [candidate, incumbent] = await Promise.all([scoreOf(options.judge, turn, candidateAnswer, nextState, signal), scoreOf(options.judge, turn, incumbentAnswer, nextState, signal)]);
    return { turnId: turn.id, sessionId: turn.sessionId, candidate, incumbent, preferred: preferenceOf(candidate, incumbent) };
  };
  // A few workers take the turns in order; each item keeps its turn's place, so the evidence reads the same at any concurrency.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < turns.length) {
      const index = next;
      next += 1;
      items[index] = await replayOne(turns[index] as (typeof turns)[number]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, turns.length)) }, worker));
  const decision = decideReplayGate(items, options.rule ?? defaultReplayGateRule);
  return {
    method: 'replay',
    candidate: run.candidate,
    incumbent: run.incumbent,
    ...decision,
    sessions,
    items,
    startedAt,
    endedAt: options.now(),
    heldOut: options.heldOutShare > 0,
  };
}
