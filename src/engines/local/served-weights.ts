/**
 * The weights the sampler worker serves and which model each policy version runs on:
 *
 * - the base weights are loaded once and kept for the worker's life. Version 0 runs on them without
 *   LoRA, and every adapter version runs on them with its own adapter, in the same continuous batch
 *   (`model/continuous-batcher.ts`: each row gets its own adapter's delta). At most
 *   `maxResidentAdapters` adapters are held (`../adapter-residency.ts`): a cold one is loaded on
 *   demand from its artifact (pushed by `loadPolicy`, else fetched from the engine's artifact
 *   source), least recently used idle ones make room, the active version and callers' pins stay;
 * - a full-weights version (`--train-params full`) cannot batch with adapters: the active one gets a
 *   model of its own beside the base weights, and a request pinned to another full-weights version
 *   runs alone on a model loaded for it and dropped after (`needsExclusive`), as before.
 */
import { loadTransformer, type Transformer } from '../../model/transformer.js';
import { readSafetensors } from '../../model/safetensors.js';
import type { LoraAdapter } from '../../model/lora-adapter.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import { createAdapterResidency, createResidencyPins, type AdapterResidencyStatus } from '../adapter-residency.js';

/** What a request samples or scores with, and under which adapter (undefined: the model's own). */
export interface ServingModel {
  model: Pick<Transformer, 'shape' | 'sample' | 'score'>;
  adapter: LoraAdapter | null | undefined;
}

export interface ServedWeightsOptions {
  base: Transformer;
  loadOptions: Pick<Parameters<typeof loadTransformer>[0], 'prefixCacheBytes' | 'batching'>;
  maxResidentAdapters: number;
  /** The stored artifact of a version the worker was not given (null: no such version). */
  fetchArtifact(version: PolicyVersion): Promise<PolicyArtifact | null>;
}

export interface ServedWeights {
  readonly activeVersion: PolicyVersion;
  /** Whether a request for `version` must run alone (a full-weights version other than the active one); undefined when its kind is not known yet. */
  needsExclusive(version: PolicyVersion): boolean | undefined;
  /** Learns a version's kind (fetching its artifact when needed); `not_found` for an unknown version. */
  learnKind(version: PolicyVersion): Promise<void>;
  /** Runs `work` on `version` (undefined: the active one), holding its adapter resident meanwhile. */
  onVersion<Result>(version: PolicyVersion | undefined, work: (version: PolicyVersion, serving: ServingModel) => Promise<Result>): Promise<Result>;
  /**
   * Keeps `artifact` for requests that name its version (the gate's and the canary's candidate)
   * without serving it to the rest: a request for it loads its adapter on demand, like every other version.
   */
  stage(artifact: PolicyArtifact): void;
  /** Makes `artifact` the active version; nothing may be running. */
  loadPolicy(artifact: PolicyArtifact): Promise<void>;
  pin(version: PolicyVersion): Promise<void>;
  unpin(version: PolicyVersion): void;
  residency(): AdapterResidencyStatus;
  dispose(): void;
}

/** Artifacts `loadPolicy` pushed, kept for loading an evicted adapter again without a source: the newest ones. */
const keptArtifacts = 8;

export function createServedWeights(options: ServedWeightsOptions): ServedWeights {
  const { base } = options;
  let activeVersion: PolicyVersion = 0;
  /** The active version's own model when it is a full-weights version. */
  let full: Transformer | null = null;
  const kinds = new Map<PolicyVersion, PolicyArtifact['kind']>([[0, 'base']]);
  const artifacts = new Map<PolicyVersion, PolicyArtifact>();

  const remember = (artifact: PolicyArtifact) => {
    kinds.set(artifact.version, artifact.kind);
    artifacts.delete(artifact.version);
    artifacts.set(artifact.version, artifact);
    for (const version of artifacts.keys()) {
      if (artifacts.size <= keptArtifacts) break;
      if (version !== activeVersion) artifacts.delete(version);
    }
  };

  /** Artifacts fetched to learn their kind, until the load that follows takes them (so one request fetches once). */
  const fetchedForLoad = new Map<PolicyVersion, PolicyArtifact>();

  const artifactOf = async (version: PolicyVersion): Promise<PolicyArtifact> => {
    const known = artifacts.get(version) ?? fetchedForLoad.get(version);
    if (known !== undefined) {
      fetchedForLoad.delete(version);
      return known;
    }
    const fetched = await options.fetchArtifact(version);
    if (fetched === null) throw new ClawrlError('not_found', `policy version ${version} is not loaded in the local engine`);
    // Only its kind is kept: the source holds the bytes, and fetches them again should the adapter be evicted.
    kinds.set(version, fetched.kind);
    return fetched;
  };

  const residency = createAdapterResidency<LoraAdapter>({
    capacity: options.maxResidentAdapters,
    async load(version) {
      const artifact = await artifactOf(version);
      if (artifact.kind !== 'adapter') throw new ClawrlError('internal_error', `policy version ${version} is not an adapter`);
      return base.loadAdapter(artifact.files);
    },
    unload: (adapter) => base.unloadAdapter(adapter),
  });
  const pins = createResidencyPins(residency, '--max-resident-adapters');

  const fullModel = (artifact: PolicyArtifact): Transformer => {
    const bytes = artifact.files['model.safetensors'];
    if (bytes === undefined) throw new ClawrlError('invalid_request', 'a full-weights policy needs model.safetensors');
    return loadTransformer({ ...options.loadOptions, shape: base.shape, weights: readSafetensors(bytes).tensors });
  };

  const learnKind = async (version: PolicyVersion): Promise<void> => {
    if (kinds.has(version)) return;
    fetchedForLoad.set(version, await artifactOf(version));
    for (const stale of fetchedForLoad.keys()) if (fetchedForLoad.size > keptArtifacts) fetchedForLoad.delete(stale);
  };

  return {
    get activeVersion() {
      return activeVersion;
    },
    needsExclusive(version) {
      if (version === activeVersion) return false;
      const kind = kinds.get(version);
      return kind === undefined ? undefined : kind === 'full';
    },
    learnKind,
    async onVersion(version, work) {
      const target = version ?? activeVersion;
      if (target === activeVersion && full !== null) return work(target, { model: full, adapter: undefined });
      await learnKind(target);
      const kind = kinds.get(target);
      if (kind === 'base') return work(target, { model: base, adapter: null });
      if (kind === 'full') {
        // Another full-weights version than the active one: a model of its own, for this request alone.
        const model = fullModel(await artifactOf(target));
        try {
          return await work(target, { model, adapter: undefined });
        } finally {
          model.dispose();
        }
      }
      const lease = await residency.acquire(target);
      try {
        return await work(target, { model: base, adapter: lease.adapter });
      } finally {
        lease.release();
      }
    },
    stage(artifact) {
      if (artifact.version !== 0 && artifact.version !== activeVersion) remember(artifact);
    },

    async loadPolicy(artifact) {
      const previous = activeVersion;
      if (previous === artifact.version) return;
      const nextFull = artifact.kind === 'full' ? fullModel(artifact) : null;
      if (artifact.kind === 'base') kinds.set(artifact.version, artifact.kind);
      else remember(artifact);
      await pins.activate(kinds.get(previous) === 'adapter' ? previous : null, artifact.kind === 'adapter' ? artifact.version : null);
      full?.dispose();
      full = nextFull;
      activeVersion = artifact.version;
    },
    async pin(version) {
      await learnKind(version);
      // Only adapters take slots: the base and the active full weights are always held.
      if (kinds.get(version) === 'adapter') await pins.pin(version);
    },
    unpin: (version) => pins.unpin(version),
    residency: () => residency.status(),
    dispose() {
      residency.clear();
      full?.dispose();
      base.dispose();
    },
  };
}
