/**
 * The counters behind `/admin/status`, as both stores keep them in their `record_counts` table
 * (kept by triggers in the transaction of each write, so reading them is one small-table read
 * however many turns the store holds), and the `StoreCounts` they make.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { JudgingCounts, StoreCounts } from '../spec/records.js';

export const recordCounterNames = [
  'sessions_open',
  'sessions_closed',
  'turns_main',
  'turns_side',
  'turns_aborted',
  'turns_failed',
  'turns_trainable',
  'turns_linked',
  'judged',
  'pending',
  'retrying',
  'without_next_state',
  'hints_accepted',
  'hints_rejected',
  'judgements',
  'latency_ms_sum',
  'readable_votes',
  'agreeing_votes',
  'samples_ready',
  'samples_trained',
  'samples_dropped',
  'rollout_samples_ready',
  'rollout_samples_trained',
  'rollout_samples_dropped',
] as const;

export type RecordCounterName = (typeof recordCounterNames)[number];

export function toStoreCounts(rows: readonly { name: string; value: number }[]): StoreCounts {
  const values = new Map(rows.map((row) => [row.name, Number(row.value)]));
  const value = (name: RecordCounterName): number => {
    const found = values.get(name);
    if (found === undefined) throw new ClawrlError('store_error', `the record_counts table has no counter ${name}`);
    return found;
  };
  const judgements = value('judgements');
  const readableVotes = value('readable_votes');
  return {
    sessions: { open: value('sessions_open'), closed: value('sessions_closed') },
    turns: {
      main: value('turns_main'),
      side: value('turns_side'),
      aborted: value('turns_aborted'),
      failed: value('turns_failed'),
      trainable: value('turns_trainable'),
    },
    linked: value('turns_linked'),
    judging: {
      judged: value('judged'),
      pending: value('pending'),
      retrying: value('retrying'),
      withoutNextState: value('without_next_state'),
      hintsAccepted: value('hints_accepted'),
      hintsRejected: value('hints_rejected'),
      averageLatencyMs: judgements === 0 ? null : value('latency_ms_sum') / judgements,
      voteAgreement: readableVotes === 0 ? null : value('agreeing_votes') / readableVotes,
      samples: { ready: value('samples_ready'), trained: value('samples_trained'), dropped: value('samples_dropped') },
      rolloutSamples: {
        ready: value('rollout_samples_ready'),
        trained: value('rollout_samples_trained'),
        dropped: value('rollout_samples_dropped'),
      },
    },
  };
}

/** The session and turn counts a full recount reads from the rows (what the counters must equal). */
export interface RecountRow {
  open_sessions: number;
  closed_sessions: number;
  main_turns: number;
  side_turns: number;
  aborted_turns: number;
  failed_turns: number;
  trainable_turns: number;
  linked_turns: number;
}

export function toRecountedStoreCounts(row: RecountRow | undefined, judging: JudgingCounts): StoreCounts {
  if (row === undefined) throw new ClawrlError('store_error', 'counts query returned no row');
  return {
    sessions: { open: row.open_sessions, closed: row.closed_sessions },
    turns: {
      main: row.main_turns,
      side: row.side_turns,
      aborted: row.aborted_turns,
      failed: row.failed_turns,
      trainable: row.trainable_turns,
    },
    linked: row.linked_turns,
    judging,
  };
}
