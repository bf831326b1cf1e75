/**
 * Reads the live signal of a canary (docs/training.md, "The canary"): the main turns served since
 * the canary started, by the candidate (its cohort) and by the incumbent (everyone else), each
 * turn's reward (explicit feedback where given, else the judge's score) and its explicit feedback,
 * and decides with `decideCanary` (core). The incumbent's earlier service (its mean reward before
 * the canary) stands in when the period has too few of its turns scored.
 */
import { cohortSignalOf, decideCanary, type CanaryWatchRuleOptions } from '../core/canary-watch-rule.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { CanaryCohortSignal, PolicyCanaryEvidence } from '../spec/policy-version-state.js';
import type { RecordReads } from '../spec/record-reads.js';

export interface CanaryWatchOptions {
  store: Pick<RecordReads, 'listTurnIds' | 'getTurns' | 'dashboard'>;
  candidate: PolicyVersion;
  incumbent: PolicyVersion;
  share: number;
  rule: CanaryWatchRuleOptions;
  startedAt: number;
  now: () => number;
}

export interface CanaryWatch {
  /** Reads what arrived since the last check and decides. */
  check(): Promise<PolicyCanaryEvidence>;
}

/** Turn ids read per page. */
const pageSize = 500;
/** The incumbent's turns kept for the comparison: its newest, enough for a stable mean. */
const incumbentTurnsKept = 1_000;

export function createCanaryWatch(options: CanaryWatchOptions): CanaryWatch {
  const { store } = options;
  let offset = 0;
  const candidateTurns: string[] = [];
  let incumbentTurns: string[] = [];
  let history: CanaryCohortSignal | null | undefined;

  async function readNewTurns(): Promise<void> {
    for (;;) {
      const ids = await store.listTurnIds({ since: options.startedAt, limit: pageSize, offset });
      offset += ids.length;
      for (const turn of await store.getTurns(ids)) {
        if (turn.type !== 'main') continue;
        if (turn.policyVersion === options.candidate) candidateTurns.push(turn.id);
        else if (turn.policyVersion === options.incumbent) incumbentTurns.push(turn.id);
      }
      if (ids.length < pageSize) break;
    }
    if (incumbentTurns.length > incumbentTurnsKept) incumbentTurns = incumbentTurns.slice(-incumbentTurnsKept);
  }

  async function signalOf(turnIds: readonly string[]): Promise<CanaryCohortSignal> {
    const judgings = await store.dashboard.turnJudgings(turnIds);
    return cohortSignalOf(
      judgings.map((judging) => ({
        reward: judging.feedback?.score ?? judging.judgement?.score ?? null,
        feedback: judging.feedback?.score ?? null,
      })),
    );
  }

  async function incumbentHistory(): Promise<CanaryCohortSignal | null> {
    if (history !== undefined) return history;
    const [scores] = await store.dashboard.policyTurnScores({ from: options.incumbent, to: options.incumbent });
    history = scores === undefined ? null : { turns: scores.scoredTurns, scored: scores.scoredTurns, meanScore: scores.meanScore, feedback: 0, meanFeedback: null };
    return history;
  }

  return {
    async check() {
      await readNewTurns();
      const [canary, incumbentCohort, earlier] = await Promise.all([signalOf(candidateTurns), signalOf(incumbentTurns), incumbentHistory()]);
      const decision = decideCanary(canary, incumbentCohort, earlier, options.rule);
      return {
        incumbent: options.incumbent,
        share: options.share,
        lengthTurns: options.rule.lengthTurns,
        margin: options.rule.margin,
        canary,
        incumbentCohort,
        ...decision,
        startedAt: options.startedAt,
        updatedAt: options.now(),
      };
    },
  };
}
