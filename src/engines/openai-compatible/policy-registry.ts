/**
 * Which upstream model name serves which policy version. vLLM and SGLang serve LoRA adapters
 * by name and read them from their own disk, so a version is published by writing the PEFT
 * files to `<adapterDirectory>/<model>-v<N>-<hash>/` (a directory the server must also see, at
 * the same path) and asking the server to load that path under that name; new requests then use
 * that name while requests in flight finish on theirs. Old adapters beyond the newest
 * `retainedAdapters` are unloaded once no request uses them (engines.md §1.6: versioned names,
 * never in-place reloads). Loading never blocks a request: until the server confirms the load,
 * requests keep the version they would have had.
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
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
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
  retainedAdapters?: number;
}

export interface ResolvedPolicy {
  version: PolicyVersion;
  /** The adapter name to request, or null for the base model (or the full weights loaded). */
  adapterName: string | null;
  release(): void;
}

/** The server says it has this adapter already: under a content-unique name, the same one. */
const alreadyLoaded = /has already been loaded|already exists/i;

export class PolicyRegistry {
  private active: PolicyVersion = 0;
  /** Loaded versions: their adapter name, or null for the base model and the full weights. */
  private readonly adapters = new Map<PolicyVersion, string | null>([[0, null]]);
  private readonly inFlight = new Map<PolicyVersion, number>();
  private readonly retired = new Set<PolicyVersion>();
  private readonly retainedAdapters: number;
  /** The full-weight version the server holds (and its folder), once one was loaded. */
  private fullWeights: { version: PolicyVersion; folder: string | null } | null = null;

  constructor(private readonly options: PolicyRegistryOptions) {
    this.retainedAdapters = Math.max(1, options.retainedAdapters ?? 4);
  }

  private get admin(): UpstreamClient {
    return this.options.adminClient ?? this.options.client;
  }

  get canLoad(): boolean {
    return this.options.flavor !== 'openai' && this.options.adapterDirectory !== undefined;
  }

  /** Pins a version for one request; `release` when the request is over. */
  acquire(requested: PolicyVersion | undefined): ResolvedPolicy {
    const version = requested ?? this.active;
    const adapterName = this.adapters.get(version);
    if (adapterName === undefined) {
      if (!this.canLoad) throw new ClawrlError('unsupported', `this ${this.options.flavor} engine serves only policy version 0, not ${version}`);
      throw new ClawrlError('not_found', `policy version ${version} is not loaded on this engine`);
    }
    this.inFlight.set(version, (this.inFlight.get(version) ?? 0) + 1);
    let released = false;
    return {
      version,
      adapterName,
      release: () => {
        if (released) return;
        released = true;
        const remaining = (this.inFlight.get(version) ?? 1) - 1;
        if (remaining > 0) this.inFlight.set(version, remaining);
        else this.inFlight.delete(version);
        if (remaining <= 0 && this.retired.has(version)) void this.unload(version).catch(() => undefined);
      },
    };
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
    if (!this.canLoad) {
      throw new ClawrlError('unsupported', `the ${this.options.flavor} engine cannot load policies without an adapter directory the server reads (--adapter-dir)`);
    }
    if (artifact.kind === 'full') {
      await this.loadFullWeights(artifact);
      return;
    }
    // Base and adapters apply to the base weights: undo full weights first.
    if (this.fullWeights !== null && this.fullWeights.version !== 0) await this.updateWeights(0, this.requireModelDirectory(), null, '0');
    if (artifact.kind === 'base') {
      this.adapters.set(artifact.version, null);
      await this.activate(artifact.version);
      return;
    }
    const files = withBaseModelName(artifact.files, this.options.model);
    const name = policyFolderName(this.options.model, artifact.version, files);
    // Loaded already under this content-unique name: serving it again needs no load.
    if (this.adapters.get(artifact.version) !== name) {
      const directory = await writePolicyFolder(this.root(), name, files);
      await this.loadAdapter(name, directory);
      this.adapters.set(artifact.version, name);
    }
    this.retired.delete(artifact.version);
    await this.activate(artifact.version);
  }

  /**
   * Loads an adapter under its own name without serving it: requests reach it only by naming its
   * version (the gate's and the canary's candidate). Full weights replace the server's weights for
   * everyone, so they cannot be staged.
   */
  async stage(artifact: PolicyArtifact): Promise<void> {
    if (!this.canLoad) {
      throw new ClawrlError('unsupported', `the ${this.options.flavor} engine cannot load policies without an adapter directory the server reads (--adapter-dir)`);
    }
    if (artifact.kind === 'full') {
      throw new ClawrlError('unsupported', `a full-weight version replaces the ${this.options.flavor} server's weights for every request, so it cannot be evaluated beside serving: train LoRA adapters (--train-params lora) to gate versions`);
    }
    if (artifact.kind === 'base' || this.adapters.has(artifact.version)) return;
    const files = withBaseModelName(artifact.files, this.options.model);
    const name = policyFolderName(this.options.model, artifact.version, files);
    const directory = await writePolicyFolder(this.root(), name, files);
    await this.loadAdapter(name, directory);
    this.adapters.set(artifact.version, name);
    this.retired.delete(artifact.version);
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
      if (ClawrlError.isInstance(error) && alreadyLoaded.test(error.message)) return;
      throw error;
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
    this.adapters.set(artifact.version, null);
    await this.activate(artifact.version);
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
    if (previous.version !== version) this.adapters.delete(previous.version);
    if (version === 0) this.adapters.set(0, null);
    // The server holds the weights in memory now; an older full-weight folder is only disk used.
    if (previous.folder !== null && previous.folder !== folder) await rm(previous.folder, { recursive: true, force: true }).catch(() => undefined);
  }

  private async activate(version: PolicyVersion): Promise<void> {
    this.active = version;
    const loaded = [...this.adapters.entries()].filter(([, name]) => name !== null).map(([loadedVersion]) => loadedVersion);
    const surplus = loaded.sort((left, right) => right - left).slice(this.retainedAdapters).filter((old) => old !== version);
    for (const oldVersion of surplus) this.retired.add(oldVersion);
    // Busy versions are unloaded by the release of their last request. A failed unload only
    // leaves an idle adapter on the server, so it must not fail the load that is now active.
    const idle = surplus.filter((oldVersion) => !this.inFlight.has(oldVersion));
    await Promise.all(idle.map((oldVersion) => this.unload(oldVersion).catch(() => undefined)));
  }

  private async unload(version: PolicyVersion): Promise<void> {
    const name = this.adapters.get(version);
    if (name === undefined || name === null || !this.retired.has(version)) return;
    this.adapters.delete(version);
    this.retired.delete(version);
    await this.unloadFromServer(name);
    await rm(join(this.root(), name), { recursive: true, force: true });
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
