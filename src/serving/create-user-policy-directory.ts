/**
 * Which version serves each user (`--policy-scope user`): the user's lineage's active version, or
 * the base (version 0) for a user with none yet, and who owns each version. The gateway asks on
 * every request, so the answer comes from a snapshot of the registry, read again when the trainer
 * or an activation in this process says a lineage changed (`refresh`) and at least every
 * `maxAgeMs` otherwise, which is how activations made by another process reach this one.
 */
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';

export interface UserPolicyDirectoryOptions {
  store: Pick<PolicyRegistry, 'listPolicyVersions'>;
  now: () => number;
  /** How old a snapshot may get before a request reads the registry again; default 2 s. */
  maxAgeMs?: number;
}

export interface UserPolicyDirectory {
  /** The version a request of `user` is served: the user's active version, else the base (0). */
  versionFor(user: string): Promise<PolicyVersion>;
  /** The user owning `version` (null: the global lineage); undefined for a version the registry does not hold. */
  ownerOf(version: PolicyVersion): Promise<string | null | undefined>;
  /** The next question reads the registry again. */
  refresh(): void;
}

interface Snapshot {
  readAt: number;
  activeByUser: Map<string, PolicyVersion>;
  ownerByVersion: Map<PolicyVersion, string | null>;
}

export function createUserPolicyDirectory(options: UserPolicyDirectoryOptions): UserPolicyDirectory {
  const maxAgeMs = options.maxAgeMs ?? 2_000;
  let snapshot: Promise<Snapshot> | null = null;
  /** Bumped by `refresh`, so a read begun before it is not kept as current. */
  let generation = 0;

  async function read(): Promise<Snapshot> {
    const readAt = options.now();
    const versions = await options.store.listPolicyVersions();
    const activeByUser = new Map<string, PolicyVersion>();
    const ownerByVersion = new Map<PolicyVersion, string | null>();
    for (const version of versions) {
      ownerByVersion.set(version.version, version.user);
      if (version.user !== null && version.active) activeByUser.set(version.user, version.version);
    }
    return { readAt, activeByUser, ownerByVersion };
  }

  async function current(): Promise<Snapshot> {
    const held = snapshot;
    if (held !== null) {
      const value = await held.catch(() => null);
      if (value !== null && options.now() - value.readAt < maxAgeMs) return value;
      if (snapshot !== held) return current();
    }
    const started = generation;
    const reading = read();
    snapshot = reading;
    // A failed read is not kept: the next question tries again.
    reading.catch(() => {
      if (snapshot === reading) snapshot = null;
    });
    const value = await reading;
    if (started !== generation && snapshot === reading) snapshot = null;
    return value;
  }

  return {
    async versionFor(user) {
      return (await current()).activeByUser.get(user) ?? 0;
    },
    async ownerOf(version) {
      const known = (await current()).ownerByVersion;
      return known.has(version) ? known.get(version) : undefined;
    },
    refresh() {
      generation += 1;
      snapshot = null;
    },
  };
}
