/**
 * Independent training lineages (`TrainingEngine.lineage`: one LoRA adapter per user) over a
 * bounded pool of training clients. A lineage runs on a client it holds; one that holds none takes
 * a new client while the pool has room (a Tinker training client, begun at the base model), else
 * the least recently used idle client: that client's lineage is saved (`saveState`, weights and
 * optimizer moments) and the lineage taking it is restored from its own saved state, or reset to the
 * base model the first time. A client is idle when no call runs on it and its lineage has no
 * gradients waiting for an `optimizerStep` (a save keeps weights and moments, not gradients), so a
 * call for another lineage waits for a call to end, and is refused when only waiting gradients hold
 * every client: nothing would free one.
 *
 * Engine-neutral: the local engine pools its one trainer worker (every switch goes through its
 * saved states on disk), Tinker pools several training clients of one service.
 */
import { createHash } from 'node:crypto';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyArtifact } from '../spec/inference-engine.js';
import type { TrainingEngine } from '../spec/training-engine.js';

export interface TrainingLineagesOptions {
  /** The default lineage's client (the engine's own, created already); closed last. */
  first: TrainingEngine;
  /** Clients held at once, `first` included; at least 1. */
  capacity: number;
  /** A new client begun at the base model, which loads the others' saved states (Tinker's are the service's); needed for a capacity above 1. */
  openClient?: () => Promise<TrainingEngine>;
}

interface Slot {
  client: TrainingEngine;
  /** The lineage it holds; null once a switch to one failed (it holds nothing worth saving). */
  lineage: string | null;
  /** Settles when the lineage is restored on the client. */
  ready: Promise<void>;
  running: number;
  gradients: boolean;
  lastUsed: number;
}

const baseArtifact: PolicyArtifact = { version: 0, kind: 'base', files: {} };
/** The default lineage: the engine's own, which no caller's id can name (ids are not empty). */
const defaultLineage = '';

/** How the saved states of lineages swapped off a client are named. */
export const lineageStatePrefix = 'lineage-';

/** A saved state's name per lineage: saving again replaces it, and any id fits a checkpoint name. */
export function lineageStateName(lineage: string): string {
  return `${lineageStatePrefix}${createHash('sha256').update(lineage).digest('hex').slice(0, 24)}`;
}

/** The default lineage's engine, whose `lineage(id)` gives every other. */
export function withTrainingLineages(options: TrainingLineagesOptions): TrainingEngine {
  if (!Number.isInteger(options.capacity) || options.capacity < 1 || (options.capacity > 1 && options.openClient === undefined)) {
    throw new ClawrlError('configuration_error', `a pool of training lineages needs at least 1 client, and a way to open more than 1 (got ${options.capacity})`);
  }
  const slots: Slot[] = [{ client: options.first, lineage: defaultLineage, ready: Promise.resolve(), running: 0, gradients: false, lastUsed: 0 }];
  /** Saved states of lineages no client holds. */
  const saved = new Map<string, string>();
  const handles = new Map<string, TrainingEngine>();
  let clock = 0;
  let closed = false;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };

  /** Saves of lineages a client let go, until they are durable: restoring one waits for its save. */
  const saving = new Map<string, Promise<void>>();

  const restore = async (client: TrainingEngine, lineage: string): Promise<void> => {
    await saving.get(lineage);
    const state = saved.get(lineage);
    if (state === undefined) await client.resetWeights(baseArtifact);
    else await client.loadState(state);
  };

  /** The slot's client takes `lineage`, once what it held is saved; a failed save leaves it holding that. */
  const switchSlot = (slot: Slot, lineage: string) => {
    const previous = slot.lineage;
    slot.lineage = lineage;
    let save = Promise.resolve();
    if (previous !== null) {
      save = slot.client.saveState(lineageStateName(previous)).then((reference) => void saved.set(previous, reference));
      saving.set(previous, save);
      void save.then(
        () => saving.get(previous) === save && saving.delete(previous),
        () => saving.get(previous) === save && saving.delete(previous),
      );
    }
    const ready = save.then(
      () => restore(slot.client, lineage),
      (error: unknown) => {
        // Nothing was loaded: the client still holds the previous lineage, intact.
        slot.lineage = previous;
        slot.ready = Promise.resolve();
        throw error;
      },
    );
    slot.ready = ready;
    ready.catch(() => {
      // A failed restore leaves the client in no lineage's state.
      if (slot.lineage === lineage) slot.lineage = null;
      wake();
    });
  };

  const acquire = async (lineage: string): Promise<Slot> => {
    for (;;) {
      if (closed) throw new ClawrlError('internal_error', 'the training engine is closed');
      const held = slots.find((slot) => slot.lineage === lineage);
      const openClient = options.openClient;
      if (held === undefined && slots.length < options.capacity && openClient !== undefined) return open(openClient, lineage);
      const idle = slots.filter((slot) => slot.running === 0 && !slot.gradients).sort((left, right) => left.lastUsed - right.lastUsed);
      const slot = held ?? idle[0];
      if (slot !== undefined) {
        slot.running += 1;
        if (slot.lineage !== lineage) switchSlot(slot, lineage);
        return slot;
      }
      if (slots.every((candidate) => candidate.running === 0)) {
        throw new ClawrlError('internal_error', `every training client holds a lineage with gradients not yet stepped: step one (optimizerStep) before training lineage '${lineage}'`);
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };

  /** A new client for `lineage`, in the pool at once so other calls for it wait for this one. */
  const open = (openClient: () => Promise<TrainingEngine>, lineage: string): Slot => {
    // `client` is read only once `ready` settles (`run` waits for it), by when it is the new one.
    const slot: Slot = { client: options.first, lineage, ready: Promise.resolve(), running: 1, gradients: false, lastUsed: (clock += 1) };
    slots.push(slot);
    slot.ready = (async () => {
      slot.client = await openClient();
      await restore(slot.client, lineage);
    })();
    slot.ready.catch(() => {
      slots.splice(slots.indexOf(slot), 1);
      wake();
    });
    return slot;
  };

  /** Runs `work` on the lineage's client; `gradients`: whether the call leaves gradients waiting for a step (undefined: as they were). */
  const run = async <Result>(lineage: string, work: (client: TrainingEngine) => Promise<Result>, gradients?: boolean): Promise<Result> => {
    const slot = await acquire(lineage);
    try {
      await slot.ready;
      // Set before a pass, which may accumulate part of its gradients and then fail: they wait for a step all the same.
      if (gradients === true) slot.gradients = true;
      const result = await work(slot.client);
      if (gradients === false) slot.gradients = false;
      return result;
    } finally {
      slot.running -= 1;
      slot.lastUsed = clock += 1;
      if (slot.running === 0) wake();
    }
  };

  const engineOf = (lineage: string): TrainingEngine => ({
    engineId: options.first.engineId,
    info: options.first.info,
    capabilities: options.first.capabilities,
    forwardBackward: (input) => run(lineage, (client) => client.forwardBackward(input), true),
    optimizerStep: (input) => run(lineage, (client) => client.optimizerStep(input), false),
    publishWeights: (version) => run(lineage, (client) => client.publishWeights(version)),
    saveState: (name) => run(lineage, (client) => client.saveState(name)),
    loadState: (reference) => run(lineage, (client) => client.loadState(reference), false),
    resetWeights: (artifact) => run(lineage, (client) => client.resetWeights(artifact), false),
    lineage(id) {
      if (id === defaultLineage) throw new ClawrlError('invalid_request', 'a training lineage needs a non-empty id', { param: 'lineage' });
      const known = handles.get(id);
      if (known !== undefined) return known;
      const handle: TrainingEngine = { ...engineOf(id), close: async () => undefined };
      handles.set(id, handle);
      return handle;
    },
    async close() {
      if (closed) return;
      closed = true;
      wake();
      // The first client last: it may own what the others share (Tinker's connection).
      for (const slot of [...slots].reverse()) await slot.client.close();
    },
  });

  return engineOf(defaultLineage);
}
