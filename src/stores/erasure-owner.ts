/**
 * Whose rows an erasure of a person or a tenant takes, as both stores select them: the column that
 * names the owner on sessions, turns and feedback, and the name.
 */
import type { ErasureTarget } from '../spec/record-erasure.js';

/** The owner column and name for the user and tenant targets; null for the others. */
export function ownerOf(target: ErasureTarget): { column: 'user_id' | 'tenant'; name: string } | null {
  if (target.kind === 'user') return { column: 'user_id', name: target.user };
  if (target.kind === 'tenant') return { column: 'tenant', name: target.tenant };
  return null;
}

/** Whose memory an erasure takes whole (`user-memory-rows.ts`): the erased user's, or the erased tenant's users'. */
export function memoryOwnerOf(target: ErasureTarget): { tenant: string | null; user: string | null } {
  if (target.kind === 'user') return { tenant: null, user: target.user };
  if (target.kind === 'tenant') return { tenant: target.tenant, user: null };
  return { tenant: null, user: null };
}
