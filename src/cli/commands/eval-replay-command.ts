/**
 * `clawrl eval replay --version N [--against M] [--sessions K] [--json]`: the replay gate's
 * evaluation of a version against another (default: the active one) on a running server, for a
 * person deciding by hand (docs/training.md, "The replay gate"). It changes no version's state:
 * `clawrl policy activate` acts on the result.
 */
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { callServerAdmin } from './call-server-admin.js';

/** What this command prints of the server's evidence; the rest (each replayed turn) passes through to `--json`. */
const replayEvidenceSchema = z.looseObject({
  candidate: z.number(),
  incumbent: z.number(),
  decision: z.string(),
  reason: z.string(),
  rule: z.string(),
  heldOut: z.boolean(),
  sessions: z.number(),
  turns: z.number(),
  wins: z.number(),
  losses: z.number(),
  ties: z.number(),
  pValue: z.number().nullable(),
  candidateMeanScore: z.number().nullable(),
  incumbentMeanScore: z.number().nullable(),
  startedAt: z.number(),
  endedAt: z.number(),
});
export type ReplayEvidence = z.infer<typeof replayEvidenceSchema>;

// Replaying generates two answers and judges both for every turn: minutes on a CPU.
const replayTimeoutMs = 60 * 60_000;

export interface EvalReplayOptions {
  version: string;
  against?: string;
  sessions?: string;
}

function integerOption(text: string, flag: string): string {
  if (!/^\d+$/.test(text)) throw new ClawrlError('configuration_error', `${flag} takes a non-negative integer, got '${text}'.`);
  return text;
}

export async function runEvalReplay(url: string, adminKey: string | undefined, options: EvalReplayOptions): Promise<ReplayEvidence> {
  const query = new URLSearchParams();
  if (options.against !== undefined) query.set('against', integerOption(options.against, '--against'));
  if (options.sessions !== undefined) query.set('sessions', integerOption(options.sessions, '--sessions'));
  const route = `/admin/policies/${integerOption(options.version, '--version')}/replay${query.size === 0 ? '' : `?${query}`}`;
  const answer = replayEvidenceSchema.safeParse(await callServerAdmin({ url, adminKey, route, method: 'POST', timeoutMs: replayTimeoutMs }));
  if (!answer.success) throw new ClawrlError('upstream_error', `The server's replay evidence is not what this clawrl reads: ${answer.error.message}`);
  return answer.data;
}

export function formatReplay(evidence: ReplayEvidence): string {
  const figure = (value: number | null) => (value === null ? '–' : value.toFixed(3));
  return [
    `version ${evidence.candidate} against ${evidence.incumbent}: ${evidence.decision}`,
    `  ${evidence.turns} turns of ${evidence.sessions} ${evidence.heldOut ? 'held-out' : 'recent (not held-out)'} sessions: wins ${evidence.wins}, losses ${evidence.losses}, ties ${evidence.ties}, sign-test p ${figure(evidence.pValue)}`,
    `  mean judge score ${figure(evidence.candidateMeanScore)} vs ${figure(evidence.incumbentMeanScore)}; ${((evidence.endedAt - evidence.startedAt) / 1000).toFixed(1)} s`,
    `  ${evidence.reason}`,
    `  rule: ${evidence.rule}`,
  ].join('\n');
}
