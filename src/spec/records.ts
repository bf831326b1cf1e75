/**
 * Persisted record types. The record store is the source of truth: every service can restart
 * and rebuild its state from these.
 */
import { z } from 'zod';
import type { ChatMessage, SamplingOptions, ToolDefinition } from './chat.js';
import type { FinishReason, PolicyVersion } from './inference-engine.js';
import type { PolicyCanaryEvidence, PolicyGateEvidence, PolicyVersionState } from './policy-version-state.js';

/** `main`: the agent's line of work, trained on. `side`: heartbeats, memory, cron; served, never trained. */
export type TurnType = 'main' | 'side';

/**
 * `completed`: the response was delivered. `aborted`: the client went away mid-response (kept,
 * never trained). `failed`: the engine failed after the turn started (kept for debugging).
 */
export type TurnStatus = 'completed' | 'aborted' | 'failed';

/**
 * Why a turn the engine could have trained on is kept out of training: `train-off`, the request
 * (or its API key) said `X-Clawrl-Train: off`; `superseded`, a retry with the same prompt in the
 * same session replaced it (an agent SDK that timed out and sent the request again).
 */
export type UntrainableReason = 'train-off' | 'superseded';

export type SessionStatus = 'open' | 'closed';

/** Why a session closed. */
export type SessionCloseReason = 'done' | 'idle' | 'admin';

/** How the gateway attributed a request to its session. */
export type SessionSource = 'header' | 'path' | 'inferred' | 'new';

export interface SessionRecord {
  id: string;
  /** Tenant (API key name) that opened the session; null when auth is off. */
  tenant: string | null;
  /** User whose request opened it (`tenant/name`, the tenant for a key naming no user); null when no key or trusted header named one. */
  user: string | null;
  status: SessionStatus;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  closeReason: SessionCloseReason | null;
  /** Main turns, oldest first. */
  turnIds: string[];
  /** Side turns count. */
  sideTurns: number;
}

export interface TurnTimings {
  /** Epoch milliseconds when the request arrived. */
  startedAt: number;
  /** When the first token was sent to the client; null if none was. */
  firstTokenAt: number | null;
  endedAt: number;
}

/** A turn as the gateway hands it to the store. */
export interface NewTurn {
  id: string;
  sessionId: string;
  type: TurnType;
  status: TurnStatus;
  /** False for engines without exact token ids, aborted and failed turns. */
  trainable: boolean;
  tenant: string | null;
  /** User the request's credentials named (`tenant/name`); null when none did. */
  user: string | null;
  model: string;
  policyVersion: PolicyVersion;
  /** Normalized request messages, exactly as the model saw them (after any truncation). */
  messages: ChatMessage[];
  tools: ToolDefinition[];
  sampling: SamplingOptions;
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** One log-prob per response token. */
  logprobs: number[];
  /** The assistant message the client received (content and tool calls). */
  response: ChatMessage;
  finishReason: FinishReason;
  timings: TurnTimings;
  /** For failed turns, what went wrong. */
  error: string | null;
  /**
   * Key under which later requests that quote this turn's reply find the session again (header-free
   * session stitching); null for turns that must not be matched.
   */
  replyKey: string | null;
  /** Set when the request itself kept the turn out of training; absent or null otherwise. */
  untrainableReason?: UntrainableReason | null;
  /** The retry that replaced this turn (`untrainableReason` `superseded`); absent or null otherwise. */
  supersededBy?: string | null;
}

export interface TurnRecord extends NewTurn {
  untrainableReason: UntrainableReason | null;
  supersededBy: string | null;
  /** Position among the session's main turns (0-based); side turns get -1. */
  index: number;
  /** What followed the turn: the user's reply or the tool results. Null until linked. */
  nextState: ChatMessage[] | null;
  nextStateAt: number | null;
}

/** Counts for `/admin/status` and `clawrl status`. */
export interface StoreCounts {
  sessions: { open: number; closed: number };
  turns: { main: number; side: number; aborted: number; failed: number; trainable: number };
  /** Main turns whose next state is linked. */
  linked: number;
  judging: JudgingCounts;
}

/** A judge's verdict on a turn: +1 good, −1 bad, 0 unclear. */
export type JudgeScore = 1 | -1 | 0;

/** One raw answer of a judge with what was read from it. */
export interface JudgeVote {
  /** `verdict`: a ±1/0 vote; `hint`: a hint-extraction answer. */
  kind: 'verdict' | 'hint';
  /** The judge's raw text. */
  text: string;
  /** The box read from the text; null when unparseable. */
  score: JudgeScore | null;
  /** Hint answers: the accepted hint; null otherwise. */
  hint: string | null;
  /** Hint answers without an accepted hint: why (`negative-vote`, `hint-too-short`, ...). */
  rejection: string | null;
}

/** How the hint of a judgement was chosen among its candidates. */
export type HintSelection = 'overlap' | 'longest';

export interface NewJudgement {
  turnId: string;
  /** The backend: `policy`, `openai`, `rules`. */
  judge: string;
  judgeModel: string;
  promptVersion: string;
  /** Majority verdict; null when no vote was readable. */
  score: JudgeScore | null;
  votes: JudgeVote[];
  /** The selected hint; null when none was accepted or none was asked for. */
  hint: string | null;
  /** Every accepted hint, in vote order. */
  hintCandidates: string[];
  hintSelection: HintSelection | null;
  latencyMs: number;
  createdAt: number;
}

export interface JudgementRecord extends NewJudgement {
  /** Store-assigned; increases with every recorded judgement. */
  id: number;
}

/**
 * Where a rollout's reward came from (`clawrl rollout`, the manager; docs/environments.md): the
 * run, the group of rollouts it is compared within, the turn's index in its episode, and the
 * reward with its outcome and process parts. Clients post rewards, never advantages: the trainer
 * forms those (`core/rl/reward-baseline.ts`). A sample built on such feedback is a rollout sample;
 * every other sample is live traffic.
 */
export interface RolloutProvenance {
  runId: string;
  environment: string;
  step: number;
  /**
   * The GRPO group: the rollouts of one task in one step, compared at each turn index. Null for a
   * rollout compared with none (the manager's), which takes the recipe's `rewardBaseline`.
   */
  group: string | null;
  /** The turn's index in its episode (0 first); the trainer compares a group's turns at the same index. */
  turnIndex: number;
  /** The verifier's outcome reward of the episode. */
  outcomeReward: number;
  /** The PRM's mean vote on the turn; null in outcome-only mode. */
  processReward: number | null;
  /** The reward the turn's sample trains on, unbounded: R_t = outcome + process (`core/rl/aggregate-votes.ts`). */
  reward: number;
}

/** Explicit feedback on a turn (`POST /v1/feedback`). It overrides the judge's score. */
export interface NewFeedback {
  turnId: string;
  /** A person's or agent's reward in −1..1; null when the feedback only carries text or a hint, or is a rollout's (its reward is `rollout.reward`). */
  score: number | null;
  text: string | null;
  hint: string | null;
  /** Tenant that sent it; null when auth is off. */
  tenant: string | null;
  /** User that sent it; null when no key or trusted header named one. */
  user: string | null;
  createdAt: number;
  /** Set when a rollout driver or a manager sent it; absent or null for a person's feedback. */
  rollout?: RolloutProvenance | null;
}

export interface FeedbackRecord extends NewFeedback {
  id: number;
}

/**
 * How a sample was built (`--method`). The databases hold it as plain text and the stores check it
 * with `sampleMethodSchema` when they write and read a row, so a new method is a new entry here,
 * not a migration.
 */
export const sampleMethods = ['rl', 'opd', 'combine'] as const;
export type SampleMethod = (typeof sampleMethods)[number];
export const sampleMethodSchema = z.enum(sampleMethods);

/** `ready`: waits for the trainer; `trained`: used by a step; `dropped`: never trained (see the reason). */
export type SampleStatus = 'ready' | 'trained' | 'dropped';

/**
 * One entry of a top-k support set: a token the student ranked high, with both models' log-probs,
 * its gap and its weight. The trainer forms the token's advantage from them (`core/rl/advantages.ts`).
 */
export interface SupportToken {
  id: number;
  studentLogprob: number;
  /** Null when the token is outside the teacher's reported top list. */
  teacherLogprob: number | null;
  /**
   * teacher − student, unclipped; for a token outside the teacher's list, the list's lowest
   * log-prob − student (an upper bound); null when the teacher reported nothing at the position.
   */
  gap: number | null;
  /** w_v: the student's probability renormalized over the position's set. */
  weight: number;
}

/**
 * What the judge measured of a turn, beside the turn's own tokens: the reward, the teacher's
 * per-token gap and the support sets. It stores no advantage: the trainer forms the advantages
 * from these with its own weights, clip and baseline (`core/rl/advantages.ts`). The per-token arrays
 * hold one entry per response token; dropped samples have empty arrays.
 */
export interface NewSample {
  id: string;
  turnId: string;
  method: SampleMethod;
  status: 'ready' | 'dropped';
  /** Why a dropped sample was dropped (`no-hint`, `engine-cannot-score`, `stale`, `zero-advantage`, ...). */
  dropReason: string | null;
  /** The policy version that sampled the response. */
  policyVersion: PolicyVersion;
  judgementId: number | null;
  feedbackId: number | null;
  /** The reward r: a rollout's (unbounded), else the feedback's, else the judge's (`turnRewardOf`); null without one. */
  score: number | null;
  /** The rollout group the trainer baselines the reward within; null for live traffic and ungrouped rollouts. */
  group: SampleGroup | null;
  hint: string | null;
  lossMask: number[];
  /**
   * Δ_t = teacher_t − rollout_t per response token, unclipped: the log-prob of the sampled token
   * under the hint-augmented prompt minus the one it was sampled with. Null without a usable
   * teacher (RL samples, combine samples without a hint).
   */
  distillationGaps: number[] | null;
  teacherLogprobs: number[] | null;
  /** Per response position, the student's top-k support set; null when not built. */
  support: SupportToken[][] | null;
  createdAt: number;
}

/** A rollout sample's group and turn index: the trainer claims a group whole and compares its rewards at each index. */
export interface SampleGroup {
  id: string;
  turnIndex: number;
}

/**
 * The advantages of a sample judged before samples stored their reward and gaps apart (SQLite
 * schema 4, Postgres schema 3 and older): the judge combined w_rl·r + w_opd·clip(Δ) itself, with
 * its own weights and clip then, and the trainer trains such a sample on them as before.
 */
export interface JudgedAdvantages {
  /** One per response token. */
  advantages: number[];
  /** Per response position, the support tokens and the advantage the judge put on each. */
  support: { tokenIds: number[]; advantages: number[] }[] | null;
}

/** A stored sample with the turn's exact tokens: everything a training step reads. */
export interface SampleRecord extends Omit<NewSample, 'status'> {
  sessionId: string;
  /** Its turn's user, copied when the sample was built: a per-user trainer (`--policy-scope user`) trains it into that user's lineage. */
  user: string | null;
  status: SampleStatus;
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** The log-probs the response was sampled with. */
  rolloutLogprobs: number[];
  /** Null for every sample judged since the upgrade; see `JudgedAdvantages`. */
  judgedAdvantages: JudgedAdvantages | null;
  updatedAt: number;
}

/** A queued turn handed to one judge worker under a lease. */
export interface JudgeClaim {
  turn: TurnRecord;
  /** Bumped whenever the turn is queued again (feedback, a late next state). */
  generation: number;
  /** Failed attempts since it was last queued. */
  attempts: number;
  /** The turn's latest feedback. */
  feedback: FeedbackRecord | null;
  /** The turn's judgements, oldest first. */
  judgements: JudgementRecord[];
}

/** Counts of the judging and sample pipeline, for `/admin/status` and metrics. */
export interface JudgingCounts {
  /** Turns with a judgement or feedback. */
  judged: number;
  /** Turns queued for judging (claimed or not). */
  pending: number;
  /** Queued turns whose last attempt failed. */
  retrying: number;
  /** Trainable main turns of closed sessions that never got a next state nor feedback: kept, not trained. */
  withoutNextState: number;
  /** Judgements that asked for hints and got one / got none. */
  hintsAccepted: number;
  hintsRejected: number;
  /** Mean latency of judgements; null without any. */
  averageLatencyMs: number | null;
  /** Share of readable verdict votes that agree with their judgement's majority; null without any. */
  voteAgreement: number | null;
  samples: { ready: number; trained: number; dropped: number };
  /** Of those, the samples built on a rollout's feedback (the rest are live traffic). */
  rolloutSamples: { ready: number; trained: number; dropped: number };
}

/** A ready sample handed to the trainer under a lease, with what its loss needs of the turn. */
export interface TrainingSample extends SampleRecord {
  /**
   * The temperature the response was sampled at: rollout log-probs are log_softmax(logits / T),
   * so the trainer must take its own log-probs under the same T (0, greedy, means 1).
   */
  samplingTemperature: number;
}

/** Statistics of one training step, as `/metrics`, `clawrl status` and the policy list show them. */
export interface TrainingStepMetrics {
  /** The total loss the optimizer stepped on. */
  loss: number;
  /** Its clipped-surrogate part. */
  policyGradientLoss: number;
  /** Share of loss tokens whose PPO ratio was clipped: in the last pass over the batch (0 with one pass). */
  clipFraction: number;
  /** Passes over the batch (`trainEpochs`), when more than one; the other figures are of the first pass. */
  epochs?: number;
  /** Mean k3 KL estimate to the base model over loss tokens; null when the KL coefficient is 0. */
  kl: number | null;
  /** Mean anchor KL(q ‖ π) to the base model's top tokens over loss tokens; absent when the anchor is off. */
  anchorKl?: number;
  /** exp(trainer − rollout) log-prob ratio over loss tokens, before truncation. */
  importanceRatio: { mean: number; min: number; max: number; truncatedFraction: number };
  /** Mean |trainer − rollout| log-prob over loss tokens (sampler/trainer mismatch). */
  rolloutLogprobAbsoluteDifference: number;
  samplesUsed: number;
  /** Claimed samples dropped as too stale. */
  samplesDropped: number;
  /** Claimed samples dropped because every advantage of theirs came out 0; absent in steps recorded before it was counted. */
  samplesZeroAdvantage?: number;
  lossTokens: number;
  gradientNorm: number;
  learningRate: number;
  stepMs: number;
}

export type PolicyArtifactKind = 'base' | 'adapter' | 'full';

/** A published policy version as the trainer hands it to the store (with its artifact files). */
export interface NewPolicyVersion {
  version: PolicyVersion;
  /** The version it was trained from; null for the base. */
  parent: PolicyVersion | null;
  kind: PolicyArtifactKind;
  /** PEFT adapter files, a full-weights safetensors file, or none for the base. */
  files: Record<string, Uint8Array>;
  /** The training step that produced it; null for the base. */
  step: number | null;
  /** Samples it was trained on. */
  samples: number;
  metrics: TrainingStepMetrics | null;
  createdAt: number;
  /**
   * The user whose lineage it belongs to (`--policy-scope user`); absent or null for the global
   * lineage. Each lineage has its own active version.
   */
  user?: string | null;
}

/** A stored policy version without its files (`getPolicyArtifact` reads those). */
export interface PolicyVersionRecord extends Omit<NewPolicyVersion, 'files' | 'user'> {
  /** The lineage's owner; null for the global lineage. */
  user: string | null;
  /** Whether serving is meant to use it now (the latest activation). */
  active: boolean;
  /** Total bytes of its artifact files. */
  bytes: number;
  /** Its lifecycle state (`policy-version-state.ts`), why it is there and since when. */
  state: PolicyVersionState;
  stateReason: string | null;
  stateChangedAt: number | null;
  /** The replay gate's evidence; null when no gate ran. */
  gate: PolicyGateEvidence | null;
  /** The canary watch's evidence; null when it served no canary. */
  canary: PolicyCanaryEvidence | null;
}

/**
 * One committed training step: the version it published, the samples it used and dropped, and
 * the opaque reference of the trainer state saved after it (what a restart resumes from).
 */
export interface NewTrainingStep {
  step: number;
  policyVersion: PolicyVersion;
  /** Samples used (become `trained`). */
  trainedSampleIds: string[];
  metrics: TrainingStepMetrics;
  /** The training engine's saved-state reference; null when it saved none. */
  checkpoint: string | null;
  startedAt: number;
  endedAt: number;
}

export interface TrainingStepRecord extends Omit<NewTrainingStep, 'trainedSampleIds'> {
  samplesUsed: number;
}
