/**
 * `clawrl eval gate-trials`: the replay gate's acceptance trials on the built-in model (or `--model`),
 * poisoned and genuine candidates in turn, each on a fresh `clawrl serve --gate replay`
 * (`lab/gate-trials/run-gate-trials.ts`; figures in docs/results.md).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runGateTrials, type GateTrialKind, type GateTrialsResult } from '../../lab/gate-trials/run-gate-trials.js';
import { loadSimulatedUser } from '../../lab/personalize/load-simulated-user.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface GateTrialsCommandOptions {
  user: string;
  model: string;
  trials: string;
  sessions: string;
  seed: string;
  kinds: string;
  heldOutShare: string;
  json?: boolean;
  out?: string;
}

function positiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new ClawrlError('configuration_error', `${flag} takes a positive integer, got '${text}'.`);
  return value;
}

export async function runGateTrialsCommand(options: GateTrialsCommandOptions): Promise<GateTrialsResult> {
  const kinds = options.kinds.split(',').map((kind) => kind.trim());
  if (kinds.some((kind) => kind !== 'poisoned' && kind !== 'genuine')) throw new ClawrlError('configuration_error', `--kinds takes poisoned and/or genuine, got '${options.kinds}'.`);
  const result = await runGateTrials({
    cliScript: fileURLToPath(new URL('../main.js', import.meta.url)),
    user: loadSimulatedUser(options.user),
    kinds: kinds as GateTrialKind[],
    trials: positiveInteger(options.trials, '--trials'),
    sessions: positiveInteger(options.sessions, '--sessions'),
    seed: positiveInteger(options.seed, '--seed'),
    serveArguments: ['--model', options.model, '--method', 'rl', '--train-every', '100000', '--held-out-share', options.heldOutShare, '--gate-min-turns', '6'],
    environment: process.env,
    onProgress: (text) => process.stderr.write(`${text}\n`),
  });
  if (options.out !== undefined) writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

export function formatGateTrials(result: GateTrialsResult): string {
  const lines = [`user ${result.user}, ${result.sessions} sessions a trial`];
  for (const trial of result.trials) {
    const gate = trial.gate === null ? '' : ` w/l/t ${trial.gate.wins}/${trial.gate.losses}/${trial.gate.ties} of ${trial.gate.turns}, p ${trial.gate.pValue?.toFixed(3) ?? '–'}`;
    lines.push(`  ${trial.kind} ${trial.trial}: ${trial.state}${gate}, gate ${trial.gateSeconds.toFixed(0)} s`);
  }
  lines.push(`poisoned promoted ${result.summary.poisoned.promoted} of ${result.summary.poisoned.total}; genuine promoted ${result.summary.genuine.promoted} of ${result.summary.genuine.total}`);
  return lines.join('\n');
}
