import { describe, expect, it } from 'vitest';
import { createAdapterResidency } from './adapter-residency.js';

/** A residency of `capacity` whose loads resolve when the test says so, recording loads and unloads. */
function recordingResidency(capacity: number, failing: Set<number> = new Set()) {
  const events: string[] = [];
  const residency = createAdapterResidency<string>({
    capacity,
    load: async (version) => {
      events.push(`load ${version}`);
      if (failing.has(version)) throw new Error(`no artifact for ${version}`);
      return `adapter ${version}`;
    },
    unload: (adapter, version) => void events.push(`unload ${version}`),
  });
  return { residency, events };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createAdapterResidency', () => {
  it('loads on demand, keeps a resident adapter, and evicts the least recently used idle one', async () => {
    const { residency, events } = recordingResidency(2);
    (await residency.acquire(1)).release();
    (await residency.acquire(2)).release();
    const again = await residency.acquire(1);
    expect(again.adapter).toBe('adapter 1');
    again.release();
    (await residency.acquire(3)).release();
    expect(events).toEqual(['load 1', 'load 2', 'unload 2', 'load 3']);
    expect(residency.status()).toMatchObject({ resident: [1, 3], loads: 3, evictions: 1 });
  });

  it('never evicts an adapter in use: a request for another waits for a slot, then gets one', async () => {
    const { residency, events } = recordingResidency(2);
    const first = await residency.acquire(1);
    const second = await residency.acquire(2);
    let third: string | null = null;
    const waiting = residency.acquire(3).then((lease) => {
      third = lease.adapter;
      return lease;
    });
    await settle();
    expect(third).toBeNull();
    expect(residency.status().waiting).toBe(1);
    second.release();
    (await waiting).release();
    expect(third).toBe('adapter 3');
    expect(events).toEqual(['load 1', 'load 2', 'unload 2', 'load 3']);
    first.release();
  });

  it('ends a wait for a slot when its signal aborts (a client gone, the engine closing), and the other waits go on', async () => {
    const { residency, events } = recordingResidency(2);
    const [first, second] = [await residency.acquire(1), await residency.acquire(2)];
    const leaving = new AbortController();
    const abandoned = residency.acquire(3, leaving.signal);
    const staying = residency.acquire(4, new AbortController().signal);
    await settle();
    expect(residency.status().waiting).toBe(2);
    leaving.abort(new Error('the client went away'));
    await expect(abandoned).rejects.toThrow('the client went away');
    expect(residency.status().waiting).toBe(1);
    await expect(residency.acquire(5, AbortSignal.abort(new Error('already gone')))).rejects.toThrow('already gone');
    first.release();
    (await staying).release();
    expect(events).toEqual(['load 1', 'load 2', 'unload 1', 'load 4']);
    second.release();
  });

  it('never evicts a pinned adapter, and refuses pins that would leave no slot for the rest', async () => {
    const { residency, events } = recordingResidency(3);
    await residency.pin(1);
    await residency.pin(2);
    await expect(residency.pin(3)).rejects.toMatchObject({ code: 'unsupported' });
    // Pinning a pinned version again only counts.
    await residency.pin(2);
    (await residency.acquire(3)).release();
    (await residency.acquire(4)).release();
    expect(events).toEqual(['load 1', 'load 2', 'load 3', 'unload 3', 'load 4']);
    residency.unpin(1);
    (await residency.acquire(5)).release();
    expect(events.slice(-2)).toEqual(['unload 1', 'load 5']);
    expect(residency.status().pinned).toEqual([2]);
  });

  it('loads a version once for concurrent requests, and a failed load fails only its own requests', async () => {
    const { residency, events } = recordingResidency(2, new Set([9]));
    const leases = await Promise.all([residency.acquire(1), residency.acquire(1)]);
    expect(events).toEqual(['load 1']);
    const failed = await Promise.allSettled([residency.acquire(9), residency.acquire(9)]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(residency.holds(9)).toBe(false);
    // The failed load held no slot: version 2 takes it while 1 is still in use.
    (await residency.acquire(2)).release();
    for (const lease of leases) lease.release();
    expect(residency.status().resident).toEqual([2, 1]);
  });

  it('needs room for at least two adapters', () => {
    expect(() => recordingResidency(1)).toThrow(/at least 2/);
  });
});
