/**
 * `clawrl data delete --session <id> | --user <tenant/name> | --tenant <name> | --before <date>`: asks the running server to
 * erase what it names (`POST /admin/erasures`), so the server that owns the store, its caches, the
 * bus and the trainer does it, and prints the receipt.
 */
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { callServerAdmin } from './call-server-admin.js';

// Erasing a large period, and retraining with --on-delete retrain, take a while.
const erasureCallTimeoutMs = 10 * 60_000;

export interface DataDeleteOptions {
  session?: string;
  user?: string;
  tenant?: string;
  before?: string;
}

/** The request body of the one target the options name. */
export function erasureRequestOf(options: DataDeleteOptions): Record<string, string | number> {
  const named = (['session', 'user', 'tenant', 'before'] as const).filter((key) => options[key] !== undefined);
  if (named.length !== 1) throw new ClawrlError('configuration_error', 'Name exactly one of --session <id>, --user <tenant/name>, --tenant <name> or --before <date>.');
  if (options.before !== undefined) {
    const before = /^\d+$/.test(options.before) ? Number(options.before) : Date.parse(options.before);
    if (!Number.isFinite(before)) throw new ClawrlError('configuration_error', `--before takes an ISO date (2026-01-31, 2026-01-31T12:00:00Z) or epoch milliseconds, got '${options.before}'.`);
    return { before };
  }
  if (options.session !== undefined) return { session: options.session };
  return options.user !== undefined ? { user: options.user } : { tenant: options.tenant as string };
}

export async function requestErasure(url: string, adminKey: string | undefined, options: DataDeleteOptions): Promise<Record<string, unknown>> {
  return callServerAdmin({ url, adminKey, route: '/admin/erasures', method: 'POST', timeoutMs: erasureCallTimeoutMs, body: erasureRequestOf(options) });
}

// What the server answers, as much of it as the printout reads.
const printedReceiptSchema = z.object({
  target: z.object({ kind: z.string(), sessionId: z.string().optional(), user: z.string().optional(), tenant: z.string().optional(), before: z.number().optional() }),
  erased: z.record(z.string(), z.number()),
  trainedOnErased: z.array(z.number()),
  affectedVersions: z.array(z.number()),
  storageWiped: z.boolean(),
  eventsErased: z.number().nullable(),
  action: z.object({ onDelete: z.string(), activated: z.number().nullable(), retired: z.array(z.number()), requeued: z.number(), retrainedVersion: z.number().nullable() }),
});
type PrintedReceipt = z.infer<typeof printedReceiptSchema>;

function targetText(target: PrintedReceipt['target']): string {
  if (target.kind === 'session') return `session ${target.sessionId}`;
  if (target.kind === 'user') return `everything of user ${target.user}`;
  if (target.kind === 'tenant') return `everything of tenant ${target.tenant}`;
  return `every turn started before ${new Date(target.before ?? 0).toISOString()}`;
}

export function formatReceipt(body: Record<string, unknown>): string {
  const receipt = printedReceiptSchema.parse(body);
  const lines = [`erased ${targetText(receipt.target)}`];
  for (const [name, count] of Object.entries(receipt.erased)) lines.push(`  ${name.padEnd(12)} ${count}`);
  lines.push(`  ${'bus events'.padEnd(12)} ${receipt.eventsErased ?? 'none kept'}`);
  lines.push(receipt.storageWiped ? 'storage wiped (SQLite WAL truncated / Postgres vacuumed)' : 'storage NOT yet wiped: readers kept the WAL busy; it is truncated at the next erasure');
  if (receipt.affectedVersions.length === 0) {
    lines.push('no policy version was trained on it');
  } else {
    lines.push(`versions trained on it: ${receipt.trainedOnErased.join(', ')}; affected (with descendants): ${receipt.affectedVersions.join(', ')}`);
    const action = receipt.action;
    lines.push(`on delete: ${action.onDelete}`);
    if (action.activated !== null) lines.push(`  serving moved back to version ${action.activated}`);
    if (action.retired.length > 0) lines.push(`  retired versions ${action.retired.join(', ')}`);
    if (action.onDelete === 'retrain') lines.push(`  ${action.requeued} remaining samples queued again; retrained version: ${action.retrainedVersion ?? 'none yet'}`);
  }
  return lines.join('\n');
}
