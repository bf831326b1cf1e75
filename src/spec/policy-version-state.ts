/**
 * Where a policy version stands in its lifecycle (docs/training.md, "Versions earn their users"),
 * and the evidence that moved it: a trained version is a `candidate`, passes the replay gate,
 * serves a `canary` cohort, then becomes `active`; or it ends `rejected` (by the gate) or
 * `rolled-back` (by the canary watch or a person). `retired` is a version that no longer serves and
 * is not to be served again: superseded by a newer active version, or taken out of service on
 * purpose (a version trained on erased data). The evidence is stored as JSON on the version.
 */
import type { PolicyVersion } from './inference-engine.js';

export const policyVersionStates = ['candidate', 'canary', 'active', 'rejected', 'rolled-back', 'retired'] as const;
export type PolicyVersionState = (typeof policyVersionStates)[number];

/** One replayed turn: how the judge rated each version's answer to the recorded prompt. */
export interface PolicyGateItem {
  turnId: string;
  sessionId: string;
  /** The judge's score of each answer, −1..1 (the mean of its votes). */
  candidate: number;
  incumbent: number;
  preferred: 'candidate' | 'incumbent' | 'tie';
}

/** What the replay gate replayed, the scores, the rule and its decision. */
export interface PolicyGateEvidence {
  method: 'replay';
  candidate: PolicyVersion;
  incumbent: PolicyVersion;
  decision: 'promote' | 'reject';
  /** The rule that decided, in words with its parameters, so a reader needs no source code. */
  rule: string;
  reason: string;
  /** Whether the replayed sessions were held out of training (false: `eval replay` without a gate configured). */
  heldOut: boolean;
  sessions: number;
  turns: number;
  wins: number;
  losses: number;
  ties: number;
  /** One-sided sign-test p-value of "the candidate is no better than the incumbent"; null without decisive pairs. */
  pValue: number | null;
  candidateMeanScore: number | null;
  incumbentMeanScore: number | null;
  items: PolicyGateItem[];
  startedAt: number;
  endedAt: number;
}

/** Live signal of one cohort over the canary's period. */
export interface CanaryCohortSignal {
  turns: number;
  /** Turns with a judge score or explicit feedback, and their mean (−1..1); null before any. */
  scored: number;
  meanScore: number | null;
  /** Explicit feedback alone. */
  feedback: number;
  meanFeedback: number | null;
}

/** What the canary watch compared and decided. */
export interface PolicyCanaryEvidence {
  incumbent: PolicyVersion;
  share: number;
  lengthTurns: number;
  margin: number;
  canary: CanaryCohortSignal;
  incumbentCohort: CanaryCohortSignal;
  decision: 'watching' | 'promote' | 'roll-back';
  rule: string;
  reason: string;
  startedAt: number;
  updatedAt: number;
}

export interface SetPolicyVersionStateOptions {
  /** Why, in words a person reads on the dashboard. */
  reason: string;
  at: number;
  /** Replaces the version's gate evidence when given. */
  gate?: PolicyGateEvidence;
  /** Replaces the version's canary evidence when given. */
  canary?: PolicyCanaryEvidence;
}
