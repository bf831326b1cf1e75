/**
 * What the Tinker test server checks at the door, per flavour of server it stands for:
 *
 * - `hosted` (Thinking Machines' service as SDK 0.22–0.25 speaks to it): `/api/v1/client/config`
 *   and `/api/v1/auth/token` take the `tml-` key; with the token exchange on, every other route takes
 *   only a JWT it issued and that has not expired (the raw key gets 401, as the service rejects it).
 *   Archives only under the SDK's `checkpoints/sampler_weights/<name>/archive`, answered with a 302
 *   or a 200 `{url, expires}` to a signed storage URL that refuses requests carrying credentials.
 * - `skyrl` (`skyrl/tinker/api.py`): no token exchange; archives under the bare
 *   `checkpoints/<name>/archive` (a 302 to `…/download`), and the SDK's two-segment form gets 405,
 *   because it matches only SkyRL's DELETE route `{checkpoint_path:path}`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readSafetensors, writeSafetensors, type FloatTensorData } from '../../../model/safetensors.js';
import { writeTar } from './write-tar.js';

export type TinkerServerFlavour = 'hosted' | 'skyrl';

export interface JwtIssuer {
  issue(): string;
  accepts(token: string | undefined): boolean;
  readonly issued: () => number;
}

/** Unsigned JWTs with an `exp` `lifetimeSeconds` ahead (the client reads only `exp`). */
export function createJwtIssuer(lifetimeSeconds: number): JwtIssuer {
  const expiries = new Map<string, number>();
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    issue() {
      const exp = Math.floor(Date.now() / 1000) + lifetimeSeconds;
      const jwt = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub: 'clawrl-test', exp, jti: randomUUID() })}.test`;
      expiries.set(jwt, exp * 1000);
      return jwt;
    },
    accepts(token) {
      const expiresAt = token === undefined ? undefined : expiries.get(token);
      return expiresAt !== undefined && Date.now() < expiresAt;
    },
    issued: () => expiries.size,
  };
}

export type ArchiveRequest =
  | { kind: 'archive'; modelId: string; checkpoint: string }
  | { kind: 'download'; modelId: string; checkpoint: string }
  | { kind: 'refused'; status: number; detail: string };

/** An archive GET (the path after `/api/v1/`) as the flavour's router sees it; null when it is none. */
export function archiveRequestOf(name: string, flavour: TinkerServerFlavour): ArchiveRequest | null {
  const match = /^training_runs\/([^/]+)\/checkpoints\/(.+)$/.exec(name);
  if (match === null) return null;
  const modelId = decodeURIComponent(match[1] ?? '');
  const rest = (match[2] ?? '').split('/').map(decodeURIComponent);
  if (flavour === 'hosted') {
    if (rest.length === 3 && rest[0] === 'sampler_weights' && rest[2] === 'archive') return { kind: 'archive', modelId, checkpoint: rest[1] ?? '' };
    return { kind: 'refused', status: 404, detail: 'Not Found' };
  }
  if (rest.length === 2 && (rest[1] === 'archive' || rest[1] === 'download') && /^[A-Za-z0-9_-]+$/.test(rest[0] ?? '')) {
    return { kind: rest[1] === 'archive' ? 'archive' : 'download', modelId, checkpoint: rest[0] ?? '' };
  }
  return { kind: 'refused', status: 405, detail: 'Method Not Allowed' };
}

/**
 * The adapter files of a sampler checkpoint as a Tinker archive holds them: an `adapter_config.json`
 * with only rank and alpha (no `target_modules` to pass through), and with `train_unembed` (the
 * service's default) the unembedding LoRA's `unembed_tokens` tensors that PEFT loaders do not take.
 */
export function tinkerArchiveFilesOf(files: Record<string, Uint8Array>, trainUnembed: boolean): Record<string, Uint8Array> {
  const config = JSON.parse(new TextDecoder().decode(files['adapter_config.json'])) as { r: number; lora_alpha: number };
  const tensors = new Map<string, FloatTensorData>();
  for (const [name, tensor] of readSafetensors(files['adapter_model.safetensors'] ?? new Uint8Array()).tensors) tensors.set(name, { shape: tensor.shape, data: tensor.data });
  if (trainUnembed) {
    tensors.set('base_model.model.model.unembed_tokens.lora_A.weight', { shape: [config.r, 4], data: new Float32Array(config.r * 4) });
    tensors.set('base_model.model.model.unembed_tokens.lora_B.weight', { shape: [4, config.r], data: new Float32Array(config.r * 4) });
  }
  return {
    'adapter_config.json': new TextEncoder().encode(JSON.stringify({ r: config.r, lora_alpha: config.lora_alpha })),
    'adapter_model.safetensors': writeSafetensors(tensors),
  };
}

export interface ArchiveRoutesOptions {
  flavour: TinkerServerFlavour;
  /** How the hosted route answers: a 302 or a 200 `{url, expires}`. */
  answer: 'redirect' | 'json';
  baseUrl: () => string;
  checkpointOf: (modelId: string, checkpoint: string) => { files: Record<string, Uint8Array>; trainUnembed: boolean } | undefined;
}

export interface ArchiveRoutes {
  /** A GET under `/api/v1/training_runs/` (`name` is the path after `/api/v1/`). */
  answer(response: ServerResponse, name: string): Promise<void>;
  /** A GET of a signed storage URL (`/storage/<token>`). */
  serveSigned(request: IncomingMessage, response: ServerResponse): void;
}

/** Sampler checkpoints' archives behind a signed storage URL (hosted) or SkyRL's download route. */
export function createArchiveRoutes(options: ArchiveRoutesOptions): ArchiveRoutes {
  const hosted = options.flavour === 'hosted';
  const signedArchives = new Map<string, Uint8Array>();
  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const redirect = (response: ServerResponse, location: string) => {
    response.writeHead(302, { Location: location });
    response.end();
  };
  return {
    async answer(response, name) {
      const wanted = archiveRequestOf(name, options.flavour);
      if (wanted === null || wanted.kind === 'refused') return send(response, wanted?.status ?? 404, { detail: wanted?.detail ?? 'Not Found' });
      const stored = options.checkpointOf(wanted.modelId, wanted.checkpoint);
      if (stored === undefined) return send(response, 404, { detail: `Checkpoint not found: ${wanted.modelId}/${wanted.checkpoint}` });
      const files = Object.entries(tinkerArchiveFilesOf(stored.files, stored.trainUnembed)).map(([file, bytes]) => [`${wanted.checkpoint}/${file}`, bytes]);
      const archive = await writeTar(Object.fromEntries(files), { gzip: !hosted });
      if (wanted.kind === 'download') {
        response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        return void response.end(archive);
      }
      if (!hosted) return redirect(response, `${options.baseUrl()}/api/v1/training_runs/${wanted.modelId}/checkpoints/${wanted.checkpoint}/download`);
      const token = randomUUID();
      signedArchives.set(token, archive);
      const signed = `${options.baseUrl()}/storage/${token}?X-Signature=test`;
      if (options.answer === 'json') return send(response, 200, { url: signed, expires: new Date(Date.now() + 900_000).toISOString() });
      return redirect(response, signed);
    },
    serveSigned(request, response) {
      // A storage host: the signature is the credential, and a request carrying another is refused.
      if (request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined) {
        return send(response, 400, { detail: 'Only one auth mechanism allowed: the signed URL takes no X-API-Key or Authorization header' });
      }
      const archive = signedArchives.get(/^\/storage\/([^?]+)/.exec(request.url ?? '')?.[1] ?? '');
      if (archive === undefined) return send(response, 403, { detail: 'Request has expired or the signature does not match' });
      response.writeHead(200, { 'Content-Type': 'application/x-tar' });
      response.end(archive);
    },
  };
}
