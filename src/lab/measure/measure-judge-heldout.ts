/**
 * A judge measured on held-out next states (`judge-heldout-set.ts`): each row judged once as the
 * server judges a turn (`wantHint: false`, so the verdict votes alone), the majority verdict
 * against the expected one, overall and per kind, and every row it got wrong with its votes, so a
 * reader sees which phrasings the judge misreads and what it said about them.
 */
import type { Judge } from '../../spec/judge.js';
import { nextStateText, type HeldoutNextState } from './judge-heldout-set.js';
import { counter, rateOf, tally, type Counter, type Rate } from './tally.js';

export interface JudgeHeldoutMiss {
  id: string;
  kind: string;
  nextState: string;
  expected: -1 | 0 | 1;
  /** The majority verdict; null when no vote was readable. */
  got: number | null;
  votes: string[];
}

export interface JudgeHeldoutResult {
  judge: string;
  judgeModel: string;
  promptVersion: string;
  /** Majority verdict equal to the expected one. */
  accuracy: Rate;
  byKind: Record<string, Rate>;
  wrong: JudgeHeldoutMiss[];
  /** Rows judged (all of the file unless `--limit`). */
  rows: number;
  seconds: number;
}

export interface MeasureJudgeHeldoutOptions {
  judge: Judge;
  rows: readonly HeldoutNextState[];
  signal?: AbortSignal;
  log?: (line: string) => void;
  now?: () => number;
}

export async function measureJudgeHeldout(options: MeasureJudgeHeldoutOptions): Promise<JudgeHeldoutResult> {
  const { judge, rows } = options;
  const signal = options.signal ?? new AbortController().signal;
  const now = options.now ?? Date.now;
  const started = now();
  const all = counter();
  const byKind: Record<string, Counter> = {};
  const wrong: JudgeHeldoutMiss[] = [];
  for (const [index, row] of rows.entries()) {
    const result = await judge.judge({ ...row.input, wantHint: false }, signal);
    const right = result.score === row.expected;
    tally(all, right);
    tally((byKind[row.kind] ??= counter()), right);
    if (!right) {
      wrong.push({
        id: row.id,
        kind: row.kind,
        nextState: nextStateText(row),
        expected: row.expected,
        got: result.score,
        votes: result.votes.filter((vote) => vote.kind === 'verdict').map((vote) => vote.text),
      });
    }
    if ((index + 1) % 20 === 0) options.log?.(`judged ${index + 1}/${rows.length}, ${all.hits} right`);
  }
  return {
    judge: judge.judgeId,
    judgeModel: judge.judgeModel,
    promptVersion: judge.promptVersion,
    accuracy: rateOf(all),
    byKind: Object.fromEntries(Object.entries(byKind).map(([kind, counted]) => [kind, rateOf(counted)])),
    wrong,
    rows: rows.length,
    seconds: (now() - started) / 1000,
  };
}

const percent = (rate: Rate) => `${(rate.rate * 100).toFixed(1)}% of ${rate.count}`;
const signed = (score: number | null) => (score === null ? 'none' : score > 0 ? `+${score}` : String(score));

export function formatJudgeHeldoutResult(result: JudgeHeldoutResult): string {
  const width = Math.max(...Object.keys(result.byKind).map((kind) => kind.length), 7);
  return [
    `judge ${result.judge} (${result.judgeModel}, prompts ${result.promptVersion}), ${result.rows} held-out next states in ${result.seconds.toFixed(0)} s`,
    `${'overall'.padEnd(width)}  ${percent(result.accuracy)}`,
    ...Object.entries(result.byKind).map(([kind, rate]) => `${kind.padEnd(width)}  ${percent(rate)}`),
    ...(result.wrong.length === 0 ? [] : ['', `wrong (${result.wrong.length}):`]),
    ...result.wrong.map(
      (miss) =>
        `${miss.id}  expected ${signed(miss.expected)}, got ${signed(miss.got)}: ${JSON.stringify(miss.nextState)}\n${miss.votes.map((vote) => `    vote: ${JSON.stringify(vote)}`).join('\n')}`,
    ),
  ].join('\n');
}
