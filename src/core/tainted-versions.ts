/**
 * Which policy versions an erasure taints, and what serving falls back to. A version is tainted when
 * its own step trained on an erased sample or its parent is tainted: its weights carry what the
 * erased data taught, whoever trained it later. Pure: the stores and the data eraser feed it rows.
 */
import type { PolicyVersion } from '../spec/inference-engine.js';

export interface VersionParent {
  version: PolicyVersion;
  /** Null for the base. */
  parent: PolicyVersion | null;
}

/** `trainedOnErased` and every version descended from one, ascending. */
export function taintedVersionsOf(versions: readonly VersionParent[], trainedOnErased: Iterable<PolicyVersion>): PolicyVersion[] {
  const tainted = new Set(trainedOnErased);
  // Versions are numbered in creation order and a parent always exists before its child, so one
  // ascending pass sees every parent's verdict before its children.
  for (const entry of [...versions].sort((a, b) => a.version - b.version)) {
    if (entry.parent !== null && tainted.has(entry.parent)) tainted.add(entry.version);
  }
  return [...tainted].sort((a, b) => a - b);
}

/**
 * The version serving should fall back to: the newest version that is not tainted and is an
 * ancestor of `served` (or `served` itself), so what the served model learnt from the remaining data
 * is kept as far as it can be; else the newest untainted version; the base (0) is never tainted.
 */
export function untaintedFallbackOf(versions: readonly VersionParent[], tainted: ReadonlySet<PolicyVersion>, served: PolicyVersion): PolicyVersion {
  const parents = new Map(versions.map((entry) => [entry.version, entry.parent]));
  for (let current: PolicyVersion | null | undefined = served; current !== null && current !== undefined; current = parents.get(current)) {
    if (!tainted.has(current)) return current;
  }
  const untainted = versions.map((entry) => entry.version).filter((version) => !tainted.has(version));
  return untainted.length === 0 ? 0 : Math.max(...untainted);
}
