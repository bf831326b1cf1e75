/** `clawrl status`: counts and the current policy version of a running server. */
import { ClawrlError } from '../spec/clawrl-error.js';

export async function fetchStatus(url: string, adminKey: string | undefined): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(new URL('/admin/status', url), {
      headers: adminKey === undefined ? {} : { authorization: `Bearer ${adminKey}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new ClawrlError('upstream_error', `Cannot reach clawrl at ${url}: ${(error as Error).message}. Is it running (clawrl serve)?`, {
      cause: error,
    });
  }
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok || body === null) {
    const message = (body?.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
    throw new ClawrlError('upstream_error', `clawrl at ${url} answered: ${message}`);
  }
  return body;
}

export function formatStatus(status: Record<string, unknown>): string {
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
  ].join('\n');
}
