/**
 * Which upstream model name serves which policy version. vLLM and SGLang serve LoRA adapters
 * by name and read them from their own disk, so a version is published by writing the PEFT
 * files to `<adapterDirectory>/<model>-v<N>-<hash>/` (a directory the server must also see, at
 * the same path) and asking the server to load that path under that name; new requests then use
 * that name while requests in flight finish on theirs (engines.md §1.6: versioned names, never
 * in-place reloads). Loading never blocks a request: until the server confirms the load,
 * requests keep the version they would have had.
 *
 * The server holds at most `maxLoadedAdapters` of them (`--upstream-max-loras`), as the local engine
 * holds its own (`../adapter-residency.ts`): a request naming any committed version gets it loaded on
 * demand (from the artifacts given, else the artifact source), the least recently used idle adapter
 * is unloaded to make room, and the active version, callers' pins and adapters a request is using
 * are never unloaded; a request that finds every slot busy waits for one. SGLang with
 * `--max-loaded-loras` refuses a load beyond its limit, and every adapter kept loaded is a folder on
 * the shared disk and a name on the server: per-user versions would grow both without bound.
 *
 * Full-weight versions go to SGLang as a model folder through `/update_weights_from_disk`
 * (engines.md §2.3), tagged with `weight_version: "<N>-<hash>"`. SGLang holds new requests while it
 * swaps weights and lets running ones finish first, so each answer's `weight_version` says
 * exactly which version produced it (`versionOfWeights`). Only the newest full-weight version
 * can be served; vLLM has no such endpoint without a restart.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact, PolicyArtifactSource, PolicyVersion } from '../../spec/inference-engine.js';
import { createAdapterResidency, createResidencyPins, type AdapterResidency, type ResidencyPins } from '../adapter-residency.js';
import type { ChatFlavor } from './chat-completions-api.js';
import { modelFolderCompanions, policyFolderName, withBaseModelName, writePolicyFolder } from './write-policy-folder.js';
import {
  checkLoraAnswer,
  checkUpdateWeightsAnswer,
  parseGenerateOutput,
  type WireGenerateRequest,
  type WireLoraRequest,
  type WireUpdateWeightsFromDiskRequest,
} from './sglang-api.js';
import type { UpstreamClient } from './upstream-client.js';
import type { WireLoadLoraRequest, WireUnloadLoraRequest } from './vllm-api.js';

/** `--upstream-max-loras`'s default: the adapters clawrl kept loaded before it was an option, within the deployment guide's `--max-cpu-loras 8` / `--max-loaded-loras 8`. */
export const defaultMaxLoadedAdapters = 4;

export interface PolicyRegistryOptions {
  flavor: ChatFlavor;
  model: string;
  /** Generation and the weight-version probe. */
  client: UpstreamClient;
  /** Loads, unloads and weight updates (SGLang's admin routes, which may take another key); default `client`. */
  adminClient?: UpstreamClient;
  adapterDirectory?: string;
  /** The base model's folder: full-weight folders copy its config and tokenizer, a rollback to the base reloads it. */
  modelDirectory?: string;
  /** Adapter versions loaded on the server at once, loading ones included; at least 2; default `defaultMaxLoadedAdapters`. */
  maxLoadedAdapters?: number;
}

export interface ResolvedPolicy {
  version: PolicyVersion;
  /** The adapter name to request, or null for the base model (or the full weights loaded). */
  adapterName: string | null;
  release(): void;
}

/** The server says it has this adapter already: under a content-unique name, the same one. */
const alreadyLoaded = /has already been loaded|already exists/i;

/**
 * Adapter artifacts kept to load an evicted version again when the engine has no artifact source
 * (with one, the record store holds the bytes and they are fetched again): the newest ones given.
 */
const keptArtifacts = 8;

export class PolicyRegistry {
  private active: PolicyVersion = 0;
  /** What each version known here is; an adapter's name on the server is the residency's. */
  private readonly kinds = new Map<PolicyVersion, PolicyArtifact['kind']>([[0, 'base']]);
  /** Adapter artifacts given (or fetched to learn their kind) and not loaded since, newest last. */
  private readonly artifacts = new Map<PolicyVersion, PolicyArtifact>();
  private source: PolicyArtifactSource | null = null;
  private readonly residency: AdapterResidency<string>;
  private readonly pins: ResidencyPins;
  /** Unloads sent and not answered: a load waits for them, as SGLang with `--max-loaded-loras` refuses one beyond its limit. */
  private readonly unloading = new Set<Promise<void>>();
  /**
   * Adapters another process serving from this server (the judge beside a gateway) had loaded under
   * the same name: evicting one here only forgets it, as that process may still be serving it.
   */
  private readonly borrowed = new Set<string>();
  /** The full-weight version the server holds (and its folder), once one was loaded. */
  private fullWeights: { version: PolicyVersion; folder: string | null } | null = null;

  constructor(private readonly options: PolicyRegistryOptions) {
    this.residency = createAdapterResidency<string>({
      capacity: options.maxLoadedAdapters ?? defaultMaxLoadedAdapters,
      load: (version) => this.loadVersion(version),
      unload: (name) => this.startUnload(name),
    });
    this.pins = createResidencyPins(this.residency, '--upstream-max-loras');
  }

  private get admin(): UpstreamClient {
    return this.options.adminClient ?? this.options.client;
  }

  get canLoad(): boolean {
    return this.options.flavor !== 'openai' && this.options.adapterDirectory !== undefined;
  }

  setSource(source: PolicyArtifactSource): void {
    this.source = source;
  }

  /**
   * Holds a version for one request, loading its adapter when it is not loaded; `release` when the
   * request is over. Aborting `signal` ends a wait for a slot.
   */
  async acquire(requested: PolicyVersion | undefined, signal?: AbortSignal): Promise<ResolvedPolicy> {
    const version = requested ?? this.active;
    const kind = await this.kindOf(version);
    if (kind === 'adapter') {
      const lease = await this.residency.acquire(version, signal);
      return { version, adapterName: lease.adapter, release: () => lease.release() };
    }
    this.requireServedWeights(version, kind);
    return { version, adapterName: null, release: () => undefined };
  }

  /** Keeps a version loaded until as many `unpin`s (`InferenceEngine.pinPolicy`). */
  async pin(version: PolicyVersion): Promise<void> {
    const kind = await this.kindOf(version);
    // Only adapters take slots: the base model or the full weights are what the server holds.
    if (kind === 'adapter') await this.pins.pin(version);
    else this.requireServedWeights(version, kind);
  }

  unpin(version: PolicyVersion): void {
    this.pins.unpin(version);
  }

  /**
   * The version an SGLang answer was produced by, from its `weight_version`, once full weights
   * were loaded; null when the answer does not say (then the pinned version stands).
   */
  versionOfWeights(weightVersion: string | null): PolicyVersion | null {
    const match = weightVersion === null ? null : /^(\d+)(-[0-9a-f]+)?$/.exec(weightVersion);
    if (this.fullWeights === null || match === null) return null;
    return Number(match[1]);
  }

  async load(artifact: PolicyArtifact): Promise<void> {
    this.requireLoading();
    if (artifact.kind === 'full') {
      await this.loadFullWeights(artifact);
      return;
    }
    // Base and adapters apply to the base weights: undo full weights first.
    if (this.fullWeights !== null && this.fullWeights.version !== 0) await this.updateWeights(0, this.requireModelDirectory(), null, '0');
    this.keep(artifact);
    await this.activate(artifact);
  }

  /**
   * Loads an adapter under its own name without serving it: requests reach it only by naming its
   * version (the gate's and the canary's candidate). Full weights replace the server's weights for
   * everyone, so they cannot be staged.
   */
  async stage(artifact: PolicyArtifact): Promise<void> {
    this.requireLoading();
    if (artifact.kind === 'full') {
      throw new ClawrlError('unsupported', `a full-weight version replaces the ${this.options.flavor} server's weights for every request, so it cannot be evaluated beside serving: train LoRA adapters (--train-params lora) to gate versions`);
    }
    this.keep(artifact);
    // Loaded now, so a load the server refuses fails the staging rather than the gate's first request.
    if (artifact.kind === 'adapter') (await this.residency.acquire(artifact.version)).release();
  }

  private async activate(artifact: PolicyArtifact): Promise<void> {
    const previous = this.kinds.get(this.active) === 'adapter' ? this.active : null;
    await this.pins.activate(previous, artifact.kind === 'adapter' ? artifact.version : null);
    this.active = artifact.version;
  }

  private requireLoading(): void {
    if (!this.canLoad) {
      throw new ClawrlError('unsupported', `the ${this.options.flavor} engine cannot load policies without an adapter directory the server reads (--adapter-dir)`);
    }
  }

  /** What `version` is, fetching its artifact from the source when it is not known here. */
  private async kindOf(version: PolicyVersion): Promise<PolicyArtifact['kind']> {
    if (!this.canLoad && version !== 0) throw new ClawrlError('unsupported', `this ${this.options.flavor} engine serves only policy version 0, not ${version}`);
    const known = this.kinds.get(version);
    if (known !== undefined) return known;
    const fetched = this.source === null ? null : await this.source(version);
    if (fetched === null) throw new ClawrlError('not_found', `policy version ${version} is not loaded on this engine`);
    // The load that follows takes it, so one request fetches once.
    this.keep(fetched);
    return fetched.kind;
  }

  /** A version that is no adapter runs on the weights the server holds: the base model's, or the newest full weights. */
  private requireServedWeights(version: PolicyVersion, kind: PolicyArtifact['kind']): void {
    const held = this.fullWeights?.version ?? 0;
    const served = kind === 'full' ? held === version : held === 0;
    if (!served) throw new ClawrlError('not_found', `policy version ${version} is not loaded on this engine: the server holds the weights of version ${held}`);
  }

  private keep(artifact: PolicyArtifact): void {
    this.kinds.set(artifact.version, artifact.kind);
    if (artifact.kind !== 'adapter') return;
    this.artifacts.delete(artifact.version);
    this.artifacts.set(artifact.version, artifact);
    const surplus = [...this.artifacts.keys()].slice(0, Math.max(0, this.artifacts.size - keptArtifacts));
    for (const old of surplus) this.artifacts.delete(old);
  }

  private async artifactOf(version: PolicyVersion): Promise<PolicyArtifact> {
    const kept = this.artifacts.get(version);
    if (kept !== undefined) {
      if (this.source !== null) this.artifacts.delete(version);
      return kept;
    }
    const fetched = this.source === null ? null : await this.source(version);
    if (fetched === null) throw new ClawrlError('not_found', `policy version ${version} is no longer loaded on this engine, and it has no artifact source to load it from`);
    return fetched;
  }

  /** The residency's load: the version's folder written and loaded under its content-unique name. */
  private async loadVersion(version: PolicyVersion): Promise<string> {
    const artifact = await this.artifactOf(version);
    if (artifact.kind !== 'adapter') throw new ClawrlError('internal_error', `policy version ${version} is not an adapter`);
    // They never reject: a failed unload only leaves an idle adapter on the server.
    await Promise.all([...this.unloading]);
    const files = withBaseModelName(artifact.files, this.options.model);
    const name = policyFolderName(this.options.model, version, files);
    const directory = await writePolicyFolder(this.root(), name, files);
    await this.loadAdapter(name, directory);
    return name;
  }

  /** The residency's unload, which cannot wait: the next load waits for it instead (`unloading`). */
  private startUnload(name: string): void {
    if (this.borrowed.delete(name)) return;
    const unloading: Promise<void> = this.unloadFromServer(name)
      .then(() => rm(join(this.root(), name), { recursive: true, force: true }))
      .catch(() => undefined)
      .finally(() => this.unloading.delete(unloading));
    this.unloading.add(unloading);
  }

  private root(): string {
    return this.options.adapterDirectory ?? '';
  }

  private requireModelDirectory(): string {
    if (this.options.modelDirectory === undefined) {
      throw new ClawrlError('configuration_error', 'full-weight versions on sglang need --model to be the model folder the server was started with');
    }
    return this.options.modelDirectory;
  }

  private async loadAdapter(name: string, directory: string): Promise<void> {
    this.borrowed.delete(name);
    try {
      if (this.options.flavor === 'sglang') {
        const request: WireLoraRequest = { lora_name: name, lora_path: directory };
        checkLoraAnswer(await this.admin.postJson('/load_lora_adapter', request), 'load the adapter');
      } else {
        const request: WireLoadLoraRequest = { lora_name: name, lora_path: directory };
        await this.admin.postForText('/v1/load_lora_adapter', request);
      }
    } catch (error) {
      // Another process serving from this server (the judge beside a gateway) loaded it first.
      if (!ClawrlError.isInstance(error) || !alreadyLoaded.test(error.message)) throw error;
      this.borrowed.add(name);
    }
  }

  private async loadFullWeights(artifact: PolicyArtifact): Promise<void> {
    if (this.options.flavor !== 'sglang') {
      throw new ClawrlError(
        'unsupported',
        'vllm cannot load full-weight versions at run time (it reloads weights only from its own model path, after a restart): train LoRA adapters (--train-params lora)',
      );
    }
    const modelDirectory = this.requireModelDirectory();
    const name = policyFolderName(this.options.model, artifact.version, artifact.files);
    const folder = await writePolicyFolder(this.root(), name, artifact.files, { modelDirectory, companions: modelFolderCompanions });
    // `<N>-<hash>`: the weights' own name, so weights of an earlier run are never taken for these.
    await this.updateWeights(artifact.version, folder, folder, name.slice(name.lastIndexOf('-v') + 2));
    this.keep(artifact);
    await this.activate(artifact);
  }

  /**
   * The `weight_version` the server reports now, from a generation of no tokens: the one probe
   * every SGLang version answers (the GET route for it was renamed between versions).
   */
  private async serverWeightVersion(): Promise<string | null> {
    const probe: WireGenerateRequest = { input_ids: [0], sampling_params: { max_new_tokens: 0, temperature: 1, top_p: 1 }, return_logprob: true, stream: false };
    return parseGenerateOutput(await this.options.client.postJson('/generate', probe)).weightVersion;
  }

  /** Swaps the server's weights; the version it held before can no longer be served. */
  private async updateWeights(version: PolicyVersion, modelPath: string, folder: string | null, tag: string): Promise<void> {
    // Another process serving from this server (the judge beside a gateway) swapped them already:
    // a second update would only reload the same weights and hold requests again.
    const current = await this.serverWeightVersion().catch(() => null);
    if (current !== tag) {
      const request: WireUpdateWeightsFromDiskRequest = { model_path: modelPath, weight_version: tag };
      checkUpdateWeightsAnswer(await this.admin.postJson('/update_weights_from_disk', request));
    }
    const previous = this.fullWeights ?? { version: 0, folder: null };
    this.fullWeights = { version, folder };
    // The server holds the weights in memory now; an older full-weight folder is only disk used.
    if (previous.folder !== null && previous.folder !== folder) await rm(previous.folder, { recursive: true, force: true }).catch(() => undefined);
  }

  private async unloadFromServer(name: string): Promise<void> {
    if (this.options.flavor === 'sglang') {
      const request: WireLoraRequest = { lora_name: name };
      checkLoraAnswer(await this.admin.postJson('/unload_lora_adapter', request), 'unload the adapter');
    } else {
      const request: WireUnloadLoraRequest = { lora_name: name };
      await this.admin.postForText('/v1/unload_lora_adapter', request);
    }
  }
}
