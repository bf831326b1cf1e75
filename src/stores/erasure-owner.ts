/**
 * Whose rows an erasure of a person or a tenant takes, as both stores select them: the column that
 * names the owner on sessions, turns and feedback, and the name.
 */
import type { ErasureTarget } from '../spec/record-erasure.js';

type OwnerTarget = Extract<ErasureTarget, { kind: 'user' | 'tenant' }>;
type Owner = { column: 'user_id' | 'tenant'; name: string };

/** The owner column and name for the user and tenant targets; null for the others. */
export function ownerOf(target: OwnerTarget): Owner;
export function ownerOf(target: ErasureTarget): Owner | null;
export function ownerOf(target: ErasureTarget): Owner | null {
  if (target.kind === 'user') return { column: 'user_id', name: target.user };
  if (target.kind === 'tenant') return { column: 'tenant', name: target.tenant };
  return null;
}

/** Whose memory an erasure takes whole (`user-memory-rows.ts`): the erased user's, or the erased tenant's users'. */
export function memoryOwnerOf(target: ErasureTarget): { tenant: string | null; user: string | null } {
  const owner = ownerOf(target);
  return { tenant: owner?.column === 'tenant' ? owner.name : null, user: owner?.column === 'user_id' ? owner.name : null };
}
