/**
 * The two messages of the manager/worker loop, as they cross the task queue: anyone's agent can
 * take part by reading `tasks.<env>` and writing `results.<env>` in these shapes (camelCase, as
 * the event bus's payloads; `docs/environments.md` shows both).
 *
 * A task message carries the task so a worker can build its environment; a result carries the
 * evidence the environment reported and the gateway ids of the worker's turns. The manager never
 * trusts a result's reward or its copy of the task: it verifies the evidence against its own copy.
 */
import { z } from 'zod';
import type { EnvironmentTask } from '../../spec/environment.js';

/** `tasks.arithmetic`: where a manager publishes the environment's tasks. */
export function tasksTopicOf(environment: string): string {
  return `tasks.${environment}`;
}

/** `results.arithmetic`: where workers publish what they did with them. */
export function resultsTopicOf(environment: string): string {
  return `results.${environment}`;
}

/** A run's name: what makes its tasks' ids unique on the topic (the deduplication id is `<run>/<task id>`). */
export const runNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** The deduplication id of a task and of its result: one of each per (run, task) within the queue's window. */
export function rolloutMessageIdOf(run: string, taskId: string): string {
  return `${run}/${taskId}`;
}

const taskSchema: z.ZodType<EnvironmentTask> = z.object({
  id: z.string().min(1).max(200),
  split: z.enum(['train', 'test']),
  data: z.record(z.string(), z.unknown()),
});

export const taskMessageSchema = z.object({
  run: z.string().regex(runNamePattern),
  environment: z.string().min(1),
  task: taskSchema,
});
export type TaskMessage = z.infer<typeof taskMessageSchema>;

/** What a worker says about its rollout, for people reading results; the manager scores from `outcome` only. */
export const transcriptSummarySchema = z.object({
  /** Assistant messages the rollout took. */
  turns: z.number().int().nonnegative(),
  /** Tool calls across those messages. */
  toolCalls: z.number().int().nonnegative(),
  /** The last assistant message's text, cut to 2,000 characters. */
  finalMessage: z.string().max(2_000),
  /** Why the episode ended: the environment said done, or the turn limit. */
  finish: z.enum(['done', 'max-turns']),
});
export type TranscriptSummary = z.infer<typeof transcriptSummarySchema>;

export const resultMessageSchema = z.object({
  run: z.string().regex(runNamePattern),
  environment: z.string().min(1),
  task: taskSchema,
  /** The gateway session of the rollout (its `X-Session-Id`). */
  sessionId: z.string().min(1),
  /** The rollout's main turns on the gateway, oldest first; the appraisal goes to the last. */
  turnIds: z.array(z.string().min(1)).min(1),
  /** The evidence the environment reported when it finished (`Environment.step`'s `outcome`). */
  outcome: z.record(z.string(), z.unknown()),
  transcript: transcriptSummarySchema,
  /** Who solved it: the worker's consumer instance name, for logs. */
  worker: z.string().min(1).max(128),
});
export type ResultMessage = z.infer<typeof resultMessageSchema>;
