/** `clawrl status`: counts and the current policy version of a running server. */
import { callServerAdmin } from './call-server-admin.js';

export async function fetchStatus(url: string, adminKey: string | undefined): Promise<Record<string, unknown>> {
  return callServerAdmin({ url, adminKey, route: '/admin/status', method: 'GET', timeoutMs: 10_000 });
}

export function formatStatus(status: Record<string, unknown>): string {
  if (typeof status.tenant === 'string') return formatTenantStatus(status);
  const turns = (status.turns ?? {}) as Record<string, number>;
  const samples = (status.samples ?? {}) as Record<string, number>;
  return [
    `model           ${String(status.model)} (${String(status.engine)} engine)`,
    `policy version  ${String(status.policyVersion)}`,
    `sessions        ${String(status.sessions)} (${String(status.sessionsOpen)} open)`,
    `turns           ${turns.main ?? 0} main, ${turns.side ?? 0} side, ${turns.aborted ?? 0} aborted, ${turns.failed ?? 0} failed`,
    `trainable       ${String(status.trainable)} (${String(status.linked)} with next state)`,
    `judged          ${String(status.judged)}`,
    `samples         ${samples.ready ?? 0} ready, ${samples.trained ?? 0} trained`,
    `train steps     ${String(status.trainSteps)}`,
    ...trainingLines(status.training),
  ].join('\n');
}

/** A tenant key's view (`/admin/status` answers only its own records). */
function formatTenantStatus(status: Record<string, unknown>): string {
  const turns = (status.turns ?? {}) as Record<string, number>;
  return [
    `tenant          ${String(status.tenant)}`,
    `model           ${String(status.model)} (${String(status.engine)} engine)`,
    `policy version  ${String(status.policyVersion)}`,
    `sessions        ${String(status.sessions)} (${String(status.sessionsOpen)} open)`,
    `turns           ${turns.main ?? 0} main, ${turns.side ?? 0} side`,
    `feedback        ${String(status.feedback)}`,
  ].join('\n');
}

/** The training state and the last step's metrics, when the server reports them. */
function trainingLines(training: unknown): string[] {
  if (typeof training !== 'object' || training === null) return [];
  const state = training as { enabled?: boolean; paused?: boolean; lastStep?: { step: number; metrics: Record<string, unknown> } | null };
  const lines = [`training        ${state.enabled !== true ? 'off' : state.paused === true ? 'paused' : 'on'}`];
  const metrics = state.lastStep?.metrics as
    | { loss: number; policyGradientLoss: number; clipFraction: number; kl: number | null; importanceRatio: { mean: number; min: number; max: number }; samplesUsed: number; samplesDropped: number; stepMs: number }
    | undefined;
  if (metrics !== undefined) {
    lines.push(
      `last step       #${state.lastStep?.step}: loss ${metrics.loss.toFixed(4)}, pg loss ${metrics.policyGradientLoss.toFixed(4)}, clip ${metrics.clipFraction.toFixed(3)}, ` +
        `kl ${metrics.kl === null ? '-' : metrics.kl.toFixed(4)}, IS ratio ${metrics.importanceRatio.mean.toFixed(3)} [${metrics.importanceRatio.min.toFixed(3)}, ${metrics.importanceRatio.max.toFixed(3)}], ` +
        `${metrics.samplesUsed} samples used, ${metrics.samplesDropped} dropped stale, ${(metrics.stepMs / 1000).toFixed(1)} s`,
    );
  }
  return lines;
}
