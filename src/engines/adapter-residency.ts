/**
 * Which LoRA adapters an engine holds, when it can hold only so many (`--max-resident-adapters`):
 * a request's adapter is loaded on demand, least recently used adapters make room, and an adapter
 * that a request is using or that is pinned (the active version, a caller's pin) is never evicted.
 * A request that finds every slot busy waits for one instead of failing: slots free as requests
 * finish, and pins may hold at most all but one slot, so one always comes free.
 *
 * Engine-neutral (the adapter is whatever `load` returns): the local engine keeps its tensors here;
 * an engine server's load and unload calls fit the same shape.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';

export interface AdapterResidencyOptions<Adapter> {
  /** Adapters held at once, loading ones included; at least 2. */
  capacity: number;
  /** Loads a version's adapter; a rejection fails the requests waiting for it, not the others. */
  load(version: PolicyVersion): Promise<Adapter>;
  /** Lets go of an evicted adapter (no request uses it). */
  unload(adapter: Adapter, version: PolicyVersion): void;
}

/** A request's hold on a resident adapter: it stays resident until released. */
export interface AdapterLease<Adapter> {
  readonly adapter: Adapter;
  /** Idempotent. */
  release(): void;
}

export interface AdapterResidencyStatus {
  capacity: number;
  /** Resident or loading, least recently used first. */
  resident: PolicyVersion[];
  pinned: PolicyVersion[];
  /** Requests waiting for a slot. */
  waiting: number;
  loads: number;
  evictions: number;
}

export interface AdapterResidency<Adapter> {
  /**
   * The version's adapter, loaded (after waiting for a slot) when it is not resident. Aborting
   * `signal` ends a wait for a slot with the signal's reason (a client gone, the engine closing).
   */
  acquire(version: PolicyVersion, signal?: AbortSignal): Promise<AdapterLease<Adapter>>;
  /**
   * Loads the version if needed and keeps it until as many `unpin`s. Refused (`unsupported`) when
   * pinned versions would fill every slot, which would leave other versions no room.
   */
  pin(version: PolicyVersion): Promise<void>;
  unpin(version: PolicyVersion): void;
  /** Whether the version's adapter is resident now (not loading). */
  holds(version: PolicyVersion): boolean;
  status(): AdapterResidencyStatus;
  /** Unloads every idle adapter (closing the engine: nothing runs any more). */
  clear(): void;
}

interface Entry<Adapter> {
  version: PolicyVersion;
  ready: Promise<Adapter>;
  adapter: Adapter | null;
  users: number;
  pins: number;
  lastUsed: number;
}

export function createAdapterResidency<Adapter>(options: AdapterResidencyOptions<Adapter>): AdapterResidency<Adapter> {
  if (!Number.isInteger(options.capacity) || options.capacity < 2) {
    throw new ClawrlError('configuration_error', `an adapter residency needs room for at least 2 adapters (got ${options.capacity})`, { param: 'maxResidentAdapters' });
  }
  const entries = new Map<PolicyVersion, Entry<Adapter>>();
  let clock = 0;
  let loads = 0;
  let evictions = 0;
  let waiters: (() => void)[] = [];

  /** Something may have come free: every waiter looks again, in the order they came. */
  const wake = () => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };

  /** Frees a slot if one is free or can be freed; false when every slot is busy. */
  const makeRoom = (): boolean => {
    if (entries.size < options.capacity) return true;
    let victim: Entry<Adapter> | null = null;
    for (const entry of entries.values()) {
      if (entry.adapter === null || entry.users > 0 || entry.pins > 0) continue;
      if (victim === null || entry.lastUsed < victim.lastUsed) victim = entry;
    }
    if (victim === null || victim.adapter === null) return false;
    entries.delete(victim.version);
    evictions += 1;
    options.unload(victim.adapter, victim.version);
    return true;
  };

  /** Waits until something may have come free, or `signal` aborts. */
  const nextWake = (signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        waiters = waiters.filter((waiter) => waiter !== woken);
        reject(signal?.reason);
      };
      const woken = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      waiters.push(woken);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /** The version's entry, created (and its load started) once a slot is free. */
  const entryOf = async (version: PolicyVersion, signal?: AbortSignal): Promise<Entry<Adapter>> => {
    for (;;) {
      const existing = entries.get(version);
      if (existing !== undefined) return existing;
      if (makeRoom()) break;
      await nextWake(signal);
    }
    const loading = Promise.resolve().then(() => options.load(version));
    const entry: Entry<Adapter> = { version, ready: loading, adapter: null, users: 0, pins: 0, lastUsed: (clock += 1) };
    loads += 1;
    entry.ready = loading.then(
      (adapter) => {
        entry.adapter = adapter;
        return adapter;
      },
      (error: unknown) => {
        // A failed load holds no slot: whoever waits for one may take it.
        if (entries.get(version) === entry) entries.delete(version);
        wake();
        throw error;
      },
    );
    entries.set(version, entry);
    return entry;
  };

  return {
    async acquire(version, signal) {
      const entry = await entryOf(version, signal);
      entry.users += 1;
      entry.lastUsed = clock += 1;
      let adapter: Adapter;
      try {
        adapter = await entry.ready;
      } catch (error) {
        entry.users -= 1;
        throw error;
      }
      let released = false;
      return {
        adapter,
        release() {
          if (released) return;
          released = true;
          entry.users -= 1;
          entry.lastUsed = clock += 1;
          if (entry.users === 0) wake();
        },
      };
    },
    async pin(version) {
      const pinned = [...entries.values()].filter((entry) => entry.pins > 0 && entry.version !== version).length;
      if (pinned + 1 > options.capacity - 1) {
        throw new ClawrlError('unsupported', `cannot pin policy version ${version}: ${pinned} pinned versions already hold all but one of the ${options.capacity} adapter slots (--max-resident-adapters)`);
      }
      const entry = await entryOf(version);
      entry.pins += 1;
      try {
        await entry.ready;
      } catch (error) {
        entry.pins -= 1;
        throw error;
      }
    },
    unpin(version) {
      const entry = entries.get(version);
      if (entry === undefined || entry.pins === 0) return;
      entry.pins -= 1;
      if (entry.pins === 0) wake();
    },
    holds: (version) => entries.get(version)?.adapter != null,
    status() {
      const ordered = [...entries.values()].sort((left, right) => left.lastUsed - right.lastUsed);
      return {
        capacity: options.capacity,
        resident: ordered.map((entry) => entry.version),
        pinned: ordered.filter((entry) => entry.pins > 0).map((entry) => entry.version),
        waiting: waiters.length,
        loads,
        evictions,
      };
    },
    clear() {
      for (const entry of [...entries.values()]) {
        if (entry.adapter === null || entry.users > 0) continue;
        entries.delete(entry.version);
        options.unload(entry.adapter, entry.version);
      }
    },
  };
}

/**
 * The pins an engine keeps on its residency: the active version's, so a request that names no
 * version never waits for a load, and its callers' (`InferenceEngine.pinPolicy`), at most
 * capacity − 2 versions, so a newly active version always finds a slot and one slot stays for
 * every other version.
 */
export interface ResidencyPins {
  /**
   * Moves the active version's pin from `previous` to `next` (null: a version that is not an
   * adapter and takes no slot). The previous pin goes first, so its slot can take the new version
   * when every other slot is pinned; a failed load pins the previous one again.
   */
  activate(previous: PolicyVersion | null, next: PolicyVersion | null): Promise<void>;
  /** A caller's pin; refused (`unsupported`) beyond capacity − 2 versions. */
  pin(version: PolicyVersion): Promise<void>;
  /** Undoes one of the caller's pins; a version the caller did not pin is left alone. */
  unpin(version: PolicyVersion): void;
}

/** `flag`: the option that sets the capacity, named in the refusal so an operator knows what to raise. */
export function createResidencyPins(residency: Pick<AdapterResidency<unknown>, 'pin' | 'unpin' | 'status'>, flag: string): ResidencyPins {
  const callerPins = new Map<PolicyVersion, number>();
  return {
    async activate(previous, next) {
      if (previous === next) return;
      if (previous !== null) residency.unpin(previous);
      if (next === null) return;
      try {
        await residency.pin(next);
      } catch (error) {
        if (previous !== null) await residency.pin(previous);
        throw error;
      }
    },
    async pin(version) {
      const { capacity } = residency.status();
      if (!callerPins.has(version) && callerPins.size + 1 > capacity - 2) {
        throw new ClawrlError(
          'unsupported',
          `cannot pin policy version ${version}: callers may pin at most ${capacity - 2} versions with ${flag} ${capacity} (one slot stays for the active version, one for the rest)`,
        );
      }
      await residency.pin(version);
      callerPins.set(version, (callerPins.get(version) ?? 0) + 1);
    },
    unpin(version) {
      const count = callerPins.get(version);
      if (count === undefined) return;
      if (count <= 1) callerPins.delete(version);
      else callerPins.set(version, count - 1);
      residency.unpin(version);
    },
  };
}
