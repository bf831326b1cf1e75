/**
 * How the rollout driver talks to a clawrl server: the official `openai` client for completions
 * and feedback (as agents do), the admin routes for what an agent has no need of: the PRM's
 * judgement of a turn, the judging backlog, and stepping training when a step's samples are in.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface RolloutClientOptions {
  /** The server's base URL, without `/v1`. */
  url: string;
  apiKey?: string | undefined;
  adminKey?: string | undefined;
}

export interface TurnJudgement {
  /** The PRM's readable verdict votes (+1, 0, −1); empty when not judged yet or unreadable. */
  votes: number[];
  judged: boolean;
}

/** The `rollout` object of `POST /v1/feedback`: a turn's reward and where it came from, never an advantage. */
export interface RolloutProvenanceWire {
  run_id: string;
  environment: string;
  step: number;
  /** The rollouts the trainer compares this one with; null for none. */
  group: string | null;
  turn_index: number;
  outcome_reward: number;
  process_reward: number | null;
  /** Unbounded: the outcome plus the process part. */
  reward: number;
}

export interface RolloutFeedback {
  turnId: string;
  score?: number;
  text?: string;
  rollout?: RolloutProvenanceWire;
}

export interface TrainingProgress {
  policyVersion: number;
  trainSteps: number;
  readySamples: number;
  judgingBacklog: number;
  paused: boolean;
}

export interface RolloutClient {
  openai: OpenAI;
  modelName(): Promise<string>;
  sendFeedback(feedback: RolloutFeedback): Promise<void>;
  turnJudgement(turnId: string): Promise<TurnJudgement>;
  progress(): Promise<TrainingProgress>;
  pauseTraining(): Promise<void>;
  resumeTraining(): Promise<void>;
  /** `POST /admin/training/step`: the outcome's kind (`trained`, `idle`, `all-stale`, `no-signal`). */
  trainNow(): Promise<string>;
}

const statusSchema = z.object({
  policyVersion: z.number(),
  trainSteps: z.number(),
  samples: z.object({ ready: z.number() }).passthrough(),
  judging: z.object({ pending: z.number(), retrying: z.number() }).passthrough(),
  training: z.object({ enabled: z.boolean(), paused: z.boolean().optional() }).passthrough(),
});
const turnSchema = z.object({
  judgements: z.array(z.object({ votes: z.array(z.object({ kind: z.string(), score: z.number().nullable() }).passthrough()) }).passthrough()),
});
const stepSchema = z.object({ kind: z.string() }).passthrough();

export function createRolloutClient(options: RolloutClientOptions): RolloutClient {
  const base = options.url.replace(/\/+$/, '');
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: options.apiKey ?? 'none', maxRetries: 0 });
  const adminHeaders: Record<string, string> = { 'content-type': 'application/json' };
  const adminKey = options.adminKey ?? options.apiKey;
  if (adminKey !== undefined) adminHeaders.authorization = `Bearer ${adminKey}`;
  let cachedModel: string | undefined;

  async function admin(method: 'GET' | 'POST', route: string): Promise<unknown> {
    const response = await fetch(`${base}${route}`, { method, headers: adminHeaders });
    const text = await response.text();
    if (!response.ok) {
      throw new ClawrlError('upstream_error', `${method} ${route} answered ${response.status}: ${text.slice(0, 300)}. The rollout driver needs the admin routes (pass --admin-key when the server has one).`);
    }
    return JSON.parse(text) as unknown;
  }

  return {
    openai,
    async modelName() {
      if (cachedModel !== undefined) return cachedModel;
      const first = (await openai.models.list()).data[0];
      if (first === undefined) throw new ClawrlError('upstream_error', `${base}/v1/models lists no model.`);
      cachedModel = first.id;
      return first.id;
    },
    async sendFeedback(feedback) {
      // Never retried: one outcome is recorded once.
      await openai.post('/feedback', {
        body: {
          turn_id: feedback.turnId,
          ...(feedback.score === undefined ? {} : { score: feedback.score }),
          ...(feedback.text === undefined ? {} : { text: feedback.text }),
          ...(feedback.rollout === undefined ? {} : { rollout: feedback.rollout }),
        },
      });
    },
    async turnJudgement(turnId) {
      const parsed = turnSchema.parse(await admin('GET', `/admin/turns/${encodeURIComponent(turnId)}`));
      const latest = parsed.judgements.at(-1);
      if (latest === undefined) return { votes: [], judged: false };
      const votes = latest.votes.flatMap((vote) => (vote.kind === 'verdict' && vote.score !== null ? [vote.score] : []));
      return { votes, judged: true };
    },
    async progress() {
      const status = statusSchema.parse(await admin('GET', '/admin/status'));
      if (!status.training.enabled) throw new ClawrlError('configuration_error', `${base} does not train (started with --no-train?): a rollout run needs a training server.`);
      return {
        policyVersion: status.policyVersion,
        trainSteps: status.trainSteps,
        readySamples: status.samples.ready,
        judgingBacklog: status.judging.pending + status.judging.retrying,
        paused: status.training.paused === true,
      };
    },
    async pauseTraining() {
      await admin('POST', '/admin/training/pause');
    },
    async resumeTraining() {
      await admin('POST', '/admin/training/resume');
    },
    async trainNow() {
      return stepSchema.parse(await admin('POST', '/admin/training/step')).kind;
    },
  };
}
