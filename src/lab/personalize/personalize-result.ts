/**
 * The result of `clawrl eval personalize` in the shape of the design brief §3, as a zod schema:
 * the command prints it with `--json`, writes it with `--out`, and the chart writer reads every
 * result file of an out folder back through it (files that do not match are skipped).
 */
import { z } from 'zod';

/** `base` is the untrained baseline: the server the command starts serves and judges but never trains. */
export const personalizeMethods = ['rl', 'opd', 'combine', 'base'] as const;
export type PersonalizeMethod = (typeof personalizeMethods)[number];

/** The probe rate the served version must reach and keep (design brief §3). */
export const successThreshold = 0.8;
/** The paper's criterion: this many consecutive sessions whose first response satisfies the user. */
export const consecutiveSessionsNeeded = 3;
/** The smallest probe the brief allows for `sessionsToSuccess`; smaller ones are for smoke tests. */
export const minimumProbeSize = 50;

export const personalizeSessionSchema = z.object({
  /** 1-based. */
  index: z.number().int().positive(),
  firstResponseSatisfied: z.boolean(),
  /** The version that served the session's first response (`X-Clawrl-Policy-Version`). */
  policyVersion: z.number().int().nonnegative(),
  sessionId: z.string().min(1),
  /** Main turns of the session, oldest first: the first response, then one per follow-up. */
  turnIds: z.array(z.string()),
  /** Responses of the session that satisfy the preference, out of `turnIds.length`. */
  responsesSatisfied: z.number().int().nonnegative(),
  /**
   * Set when a follow-up no longer fit the model's context: the session ended there, as a user
   * would start a fresh chat (the built-in model has 1,024 positions).
   */
  endedEarly: z.literal('context-full').optional(),
});

export const personalizeProbeSchema = z.object({
  /** The version that served the probe's responses. */
  policyVersion: z.number().int().nonnegative(),
  /** The session after which the probe ran; 0 is before the first session (the base rate). */
  afterSession: z.number().int().nonnegative(),
  satisfactionRate: z.number().min(0).max(1),
  satisfied: z.number().int().nonnegative(),
  /**
   * Responses no user could use whatever their style (cut off at the token limit, repeating
   * themselves, off the question; `core/reply-coherence.ts`), never counted as satisfied. Absent in
   * results written before the check existed, which counted such a response when its style matched.
   */
  incoherent: z.number().int().nonnegative().optional(),
  size: z.number().int().positive(),
  /** True when the served version kept changing and the last attempt still mixed versions. */
  mixedVersions: z.boolean(),
});

/** What the server sampled a turn with (the sampling a request that names none gets). */
export const servedSamplingSchema = z.object({ temperature: z.number(), topP: z.number(), topK: z.number().optional() });
export type ServedSampling = z.infer<typeof servedSamplingSchema>;

export const personalizeResultSchema = z.object({
  user: z.string().min(1),
  method: z.enum(personalizeMethods),
  seed: z.number().int(),
  sessionsToSuccess: z.number().int().nonnegative().nullable(),
  consecutiveCriterion: z.number().int().positive().nullable(),
  baseProbeRate: z.number().min(0).max(1),
  successThreshold: z.number(),
  probeSize: z.number().int().positive(),
  model: z.string(),
  /** The judge that scored the server's turns (`judge` and `judgeModel` of a judged turn), when the admin view could tell. */
  judge: z.object({ judge: z.string(), judgeModel: z.string().nullable() }).nullable(),
  /** The method of the server's samples, when the admin view could tell; it should equal `method`. */
  serverMethod: z.string().nullable(),
  /**
   * What the server sampled the run's turns with (the experiment names no sampling, so the server's
   * defaults: the model's generation_config.json since 2026-12-04), when the admin view could tell.
   * Absent in results written before it was recorded, whose servers sampled at temperature 1, top_p 1.
   */
  sampling: servedSamplingSchema.nullable().optional(),
  /**
   * The `clawrl serve` flags of the server the command started (the experiment's defaults
   * included; keys go by environment, never here); null against a running server (`--url`).
   * Absent in results written before it was recorded.
   */
  serverArguments: z.array(z.string()).nullable().optional(),
  /**
   * Whether the user's reply to each session's last response went to the server as feedback text
   * (`POST /v1/feedback`), so the last turn was judged too. Absent in results written before the
   * option existed, which sent none.
   */
  finalFeedback: z.boolean().optional(),
  /**
   * Set when the run stopped waiting for the server after a session: it has no admin view, or it
   * had not caught up within the longest wait. Later sessions then met versions trained on fewer
   * sessions than a patient user's, so the run does not measure what the grid does. Absent in
   * results written before it was recorded.
   */
  stoppedWaiting: z.object({ afterSession: z.number().int().positive(), reason: z.enum(['no-admin', 'timed-out']) }).nullable().optional(),
  /**
   * The other simulated users who talked to the same server at the same time, each with its own API
   * key (`--user teacher,ta,student`); absent for a user alone on its server.
   */
  sharedWith: z.array(z.string()).optional(),
  sessions: z.array(personalizeSessionSchema),
  probe: z.array(personalizeProbeSchema).min(1),
});

export type PersonalizeSession = z.infer<typeof personalizeSessionSchema>;
export type PersonalizeProbe = z.infer<typeof personalizeProbeSchema>;
export type PersonalizeResult = z.infer<typeof personalizeResultSchema>;
