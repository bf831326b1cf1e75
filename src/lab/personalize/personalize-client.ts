/**
 * How the experiment talks to clawrl: exactly as an agent would, through the official `openai`
 * client with `X-Session-Id`, `X-Turn-Type` and `X-Session-Done`, reading the served policy
 * version from `X-Clawrl-Policy-Version`. The admin routes are used only to learn when a new
 * version is active and which judge scored the turns; a server without them (or without the
 * admin key) still runs the experiment, with version changes seen on the next response instead.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { servedSamplingSchema, type ServedSampling } from './personalize-result.js';

export interface ExperimentMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  messages: readonly ExperimentMessage[];
  sessionId: string;
  /** `side` for probe requests: recorded, never judged or trained on. */
  turnType: 'main' | 'side';
  sessionDone: boolean;
  /** The request's sampling seed (OpenAI `seed`), so that a run's `--seed` fixes what is sampled. */
  seed?: number;
}

export interface CompletionResult {
  content: string;
  /** OpenAI `finish_reason`: `length` when the reply stopped at the token limit. */
  finishReason: string | null;
  policyVersion: number;
  turnId: string | null;
}

export interface TurnJudgingSummary {
  judge: { judge: string; judgeModel: string | null } | null;
  sampleMethod: string | null;
  sampling: ServedSampling | null;
}

export interface PersonalizeClient {
  modelName(): Promise<string>;
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /** The active version per `GET /admin/policies`, or null when the server cannot tell us. */
  activePolicyVersion(): Promise<number | null>;
  turnJudging(turnId: string): Promise<TurnJudgingSummary | null>;
  /** What the server still has to judge and train, per `GET /admin/status`; null when it cannot tell us. */
  backlog(): Promise<ServerBacklog | null>;
  /** `POST /v1/feedback` with the user's reply as `text`, which the server's judge reads as the turn's next state. */
  sendFeedback(feedback: { turnId: string; text: string }): Promise<void>;
}

export interface ServerBacklog {
  /** Turns with a next state that are not judged yet (retries included). */
  judgingPending: number;
  /** A step is running, or enough samples are ready for one to start. */
  trainingDue: boolean;
}

export interface PersonalizeClientOptions {
  /** The server's base URL, without `/v1`. */
  url: string;
  apiKey?: string | undefined;
  adminKey?: string | undefined;
  /**
   * The user whose own lineage serves this client (`--policy-scope user`): its active version is that
   * lineage's, or the base while it has none. Absent, the server's one active version.
   */
  lineageUser?: string | undefined;
}

const policiesSchema = z.object({ data: z.array(z.object({ version: z.number(), active: z.boolean() }).passthrough()) });
const statusSchema = z.object({
  samples: z.object({ ready: z.number() }).passthrough(),
  judging: z.object({ pending: z.number(), retrying: z.number() }).passthrough(),
  training: z
    .object({ enabled: z.boolean(), paused: z.boolean().optional(), training: z.boolean().optional(), trainEvery: z.number().optional(), stepDue: z.boolean().optional() })
    .passthrough(),
});
const turnViewSchema = z.object({
  judgement: z.object({ judge: z.string(), judgeModel: z.string().nullable().optional() }).passthrough().nullable(),
  samples: z.array(z.object({ method: z.string() }).passthrough()),
  sampling: servedSamplingSchema.optional(),
});

/** The turn view's sampling without its other fields; a top-k of 0 means none, as in `SamplingOptions`. */
function servedSamplingOf(sampling: ServedSampling | undefined): ServedSampling | null {
  if (sampling === undefined) return null;
  const { topK, ...rest } = sampling;
  return topK === undefined || topK <= 0 ? rest : { ...rest, topK };
}

/** The server's OpenAI-style refusal of a conversation that no longer fits the model's context. */
export function isContextFullError(error: unknown): boolean {
  return error instanceof OpenAI.APIError && error.status === 400 && error.code === 'context_length_exceeded';
}

export function createPersonalizeClient(options: PersonalizeClientOptions): PersonalizeClient {
  const base = options.url.replace(/\/+$/, '');
  // Main turns are never retried: a retried request would record the turn twice in its session.
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: options.apiKey ?? 'none', maxRetries: 0 });
  const adminHeaders: Record<string, string> = {};
  const adminKey = options.adminKey ?? options.apiKey;
  if (adminKey !== undefined) adminHeaders.authorization = `Bearer ${adminKey}`;
  let policiesRouteMissing = false;
  let cachedModelName: string | undefined;

  async function adminJson(route: string): Promise<unknown | null> {
    const response = await fetch(`${base}${route}`, { headers: adminHeaders });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    return (await response.json()) as unknown;
  }

  async function modelName(): Promise<string> {
    if (cachedModelName !== undefined) return cachedModelName;
    const page = await client.models.list();
    const first = page.data[0];
    if (first === undefined) throw new ClawrlError('upstream_error', `${base}/v1/models lists no model.`);
    cachedModelName = first.id;
    return first.id;
  }

  return {
    modelName,

    async complete(request) {
      const headers: Record<string, string> = { 'x-session-id': request.sessionId, 'x-turn-type': request.turnType };
      if (request.sessionDone) headers['x-session-done'] = '1';
      const { data, response } = await client.chat.completions
        .create({
          model: await modelName(),
          messages: request.messages.map((message) => ({ ...message })),
          ...(request.seed === undefined ? {} : { seed: request.seed }),
        }, {
          headers,
          maxRetries: request.turnType === 'side' ? 2 : 0,
        })
        .withResponse();
      const versionHeader = response.headers.get('x-clawrl-policy-version');
      const policyVersion = versionHeader === null ? Number.NaN : Number(versionHeader);
      if (!Number.isInteger(policyVersion) || policyVersion < 0) {
        throw new ClawrlError('upstream_error', `${base} answered without a valid X-Clawrl-Policy-Version header (got ${versionHeader}); is it a clawrl server?`);
      }
      const choice = data.choices[0];
      return { content: choice?.message.content ?? '', finishReason: choice?.finish_reason ?? null, policyVersion, turnId: response.headers.get('x-clawrl-turn-id') };
    },

    async activePolicyVersion() {
      if (policiesRouteMissing) return null;
      const lineageUser = options.lineageUser;
      const body = await adminJson(lineageUser === undefined ? '/admin/policies' : `/admin/policies?user=${encodeURIComponent(lineageUser)}`);
      const parsed = policiesSchema.safeParse(body);
      if (!parsed.success) {
        // Missing route, no admin key or an older server: rely on the response headers from now on.
        policiesRouteMissing = true;
        return null;
      }
      const active = parsed.data.data.find((policy) => policy.active)?.version;
      // A user whose lineage has no version yet is served the base.
      return active ?? (lineageUser === undefined ? null : 0);
    },

    async backlog() {
      const parsed = statusSchema.safeParse(await adminJson('/admin/status'));
      if (!parsed.success) return null;
      const { samples, judging, training } = parsed.data;
      // A server with a lineage per user says whether some user's step is due; else all ready samples make one step.
      const stepDue = training.stepDue ?? (training.trainEvery !== undefined && samples.ready >= training.trainEvery);
      const trainingDue = training.enabled && training.paused !== true && (training.training === true || stepDue);
      return { judgingPending: judging.pending + judging.retrying, trainingDue };
    },
    async sendFeedback(feedback) {
      // Through the OpenAI client, which already sends the API key and throws on an error status;
      // never retried, so one reply is never recorded twice.
      await client.post('/feedback', { body: { turn_id: feedback.turnId, text: feedback.text } });
    },
    async turnJudging(turnId) {
      const parsed = turnViewSchema.safeParse(await adminJson(`/admin/turns/${encodeURIComponent(turnId)}`));
      if (!parsed.success) return null;
      const judgement = parsed.data.judgement;
      return {
        judge: judgement === null ? null : { judge: judgement.judge, judgeModel: judgement.judgeModel ?? null },
        sampleMethod: parsed.data.samples[0]?.method ?? null,
        sampling: servedSamplingOf(parsed.data.sampling),
      };
    },
  };
}
