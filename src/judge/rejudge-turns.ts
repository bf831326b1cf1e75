/**
 * Re-scores stored turns with a judge (another backend, model or prompt version) and records the
 * judgements beside the earlier ones, so judges can be compared on the same turns. Samples are
 * left alone: they keep the judgement they were built from. Turns this judge identity already
 * judged are skipped unless `force`, so an interrupted run resumes where it stopped.
 */
import { selectHint } from '../core/judge-votes.js';
import type { Judge } from '../spec/judge.js';
import type { Logger } from '../spec/logger.js';
import type { JudgingQueue } from '../spec/judging-queue.js';
import type { RecordReads } from '../spec/record-reads.js';

export interface RejudgeTurnsOptions {
  store: Pick<JudgingQueue, 'recordJudgement'> & Pick<RecordReads, 'getTurn' | 'listJudgements' | 'listTurnIds'>;
  judge: Judge;
  /** Only turns that started at or after this time (epoch ms). */
  since?: number;
  /** Also extract hints. */
  wantHint: boolean;
  /** Re-judge turns this judge identity already judged. */
  force?: boolean;
  /** Turns judged at once; default 2. */
  concurrency?: number;
  now: () => number;
  logger: Logger;
  signal?: AbortSignal;
}

export interface RejudgeTurnsResult {
  judged: number;
  /** Already judged by this judge identity. */
  skipped: number;
  failed: number;
}

const pageSize = 100;

export async function rejudgeTurns(options: RejudgeTurnsOptions): Promise<RejudgeTurnsResult> {
  const { store, judge } = options;
  const signal = options.signal ?? new AbortController().signal;
  const concurrency = options.concurrency ?? 2;
  const result: RejudgeTurnsResult = { judged: 0, skipped: 0, failed: 0 };

  async function rejudge(turnId: string): Promise<void> {
    const earlier = await store.listJudgements(turnId);
    const same = earlier.some(
      (judgement) =>
        judgement.judge === judge.judgeId && judgement.judgeModel === judge.judgeModel && judgement.promptVersion === judge.promptVersion,
    );
    if (same && options.force !== true) {
      result.skipped += 1;
      return;
    }
    const turn = await store.getTurn(turnId);
    if (turn?.nextState == null || turn.nextState.length === 0) return;
    try {
      const judged = await judge.judge(
        { context: turn.messages, response: turn.response, nextState: turn.nextState, wantHint: options.wantHint },
        signal,
      );
      await store.recordJudgement({
        turnId,
        judge: judge.judgeId,
        judgeModel: judged.judgeModel,
        promptVersion: judged.promptVersion,
        score: judged.score,
        votes: judged.votes,
        hint: judged.hint,
        hintCandidates: judged.hintCandidates,
        hintSelection: judged.hint === null ? null : (selectHint(judged.hintCandidates)?.method ?? null),
        latencyMs: judged.latencyMs,
        createdAt: options.now(),
      });
      result.judged += 1;
    } catch (error) {
      result.failed += 1;
      options.logger.warn('re-judging a turn failed', { turnId, error: error instanceof Error ? error.message : String(error) });
    }
  }

  for (let offset = 0; ; offset += pageSize) {
    const turnIds = await store.listTurnIds({ linkedOnly: true, limit: pageSize, offset, ...(options.since === undefined ? {} : { since: options.since }) });
    for (let start = 0; start < turnIds.length; start += concurrency) {
      if (signal.aborted) return result;
      await Promise.all(turnIds.slice(start, start + concurrency).map(rejudge));
    }
    if (turnIds.length < pageSize) return result;
  }
}
