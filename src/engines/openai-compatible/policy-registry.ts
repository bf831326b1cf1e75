/**
 * Which upstream model name serves which policy version. vLLM and SGLang serve LoRA adapters
 * by name and read them from their own disk, so a version is published by writing the PEFT
 * files to `<adapterDirectory>/<model>-v<N>/` (a directory the server must also see) and asking
 * the server to load that path under the versioned name; new requests then use that name while
 * requests in flight finish on theirs. Old adapters beyond the newest `retainedAdapters` are
 * unloaded once no request uses them (engines.md §1.6: versioned names, never in-place reloads).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import type { ChatFlavor } from './chat-completions-api.js';
import { checkLoraAnswer, type WireLoraRequest } from './sglang-api.js';
import type { UpstreamClient } from './upstream-client.js';
import type { WireLoadLoraRequest, WireUnloadLoraRequest } from './vllm-api.js';

export interface PolicyRegistryOptions {
  flavor: ChatFlavor;
  model: string;
  client: UpstreamClient;
  adapterDirectory?: string;
  retainedAdapters?: number;
}

export interface ResolvedPolicy {
  version: PolicyVersion;
  /** The adapter name to request, or null for the base model. */
  adapterName: string | null;
  release(): void;
}

const safeFileName = /^[A-Za-z0-9._-]+$/;

export class PolicyRegistry {
  private active: PolicyVersion = 0;
  private readonly adapters = new Map<PolicyVersion, string | null>([[0, null]]);
  private readonly inFlight = new Map<PolicyVersion, number>();
  private readonly retired = new Set<PolicyVersion>();
  private readonly retainedAdapters: number;

  constructor(private readonly options: PolicyRegistryOptions) {
    this.retainedAdapters = Math.max(1, options.retainedAdapters ?? 4);
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

  async load(artifact: PolicyArtifact): Promise<void> {
    if (!this.canLoad) {
      throw new ClawrlError('unsupported', `the ${this.options.flavor} engine cannot load policies without an adapter directory the server reads`);
    }
    if (artifact.kind === 'full') {
      throw new ClawrlError('unsupported', 'full-weight policies cannot be pushed to a remote server over HTTP; publish LoRA adapters');
    }
    if (artifact.kind === 'base') {
      this.adapters.set(artifact.version, null);
      await this.activate(artifact.version);
      return;
    }
    const name = `${this.options.model}-v${artifact.version}`;
    const directory = join(this.options.adapterDirectory ?? '', name);
    for (const fileName of Object.keys(artifact.files)) {
      if (!safeFileName.test(fileName)) throw new ClawrlError('invalid_request', `unsafe adapter file name ${JSON.stringify(fileName)}`);
    }
    // The same name cannot be reloaded in place on either server: unload, then load.
    if (this.adapters.get(artifact.version) === name) await this.unloadFromServer(name);
    await mkdir(directory, { recursive: true });
    await Promise.all(Object.entries(artifact.files).map(([fileName, bytes]) => writeFile(join(directory, fileName), bytes)));
    if (this.options.flavor === 'sglang') {
      const request: WireLoraRequest = { lora_name: name, lora_path: directory };
      checkLoraAnswer(await this.options.client.postJson('/load_lora_adapter', request), 'load the adapter');
    } else {
      const request: WireLoadLoraRequest = { lora_name: name, lora_path: directory };
      await this.options.client.postForText('/v1/load_lora_adapter', request);
    }
    this.adapters.set(artifact.version, name);
    this.retired.delete(artifact.version);
    await this.activate(artifact.version);
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
    await rm(join(this.options.adapterDirectory ?? '', name), { recursive: true, force: true });
  }

  private async unloadFromServer(name: string): Promise<void> {
    if (this.options.flavor === 'sglang') {
      const request: WireLoraRequest = { lora_name: name };
      checkLoraAnswer(await this.options.client.postJson('/unload_lora_adapter', request), 'unload the adapter');
    } else {
      const request: WireUnloadLoraRequest = { lora_name: name };
      await this.options.client.postForText('/v1/unload_lora_adapter', request);
    }
  }
}
