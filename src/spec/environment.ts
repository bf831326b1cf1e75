/**
 * The `Environment` seam: a task an agent solves through the gateway, one assistant message at a
 * time. Learned from tinker-cookbook's `Env` / `EnvGroupBuilder`: an environment is single-use (one
 * rollout), gives an initial observation, and answers each action with the next observation, a
 * reward when it has one, and whether the episode is done. A group is `create(task)` called N times
 * for the same task; the group's advantages are computed by the rollout driver from the rewards,
 * never by the environment: algorithms stay out of environments.
 *
 * Observations and actions are chat messages, because rollouts run through the server's HTTP API
 * exactly like live traffic: the same token capture, judge, samples and trainer.
 *
 * The verifier is separate from the environment and pure: `verify(task, outcome)` reads the task and
 * the evidence the environment reported when it finished (a final answer, a directory's final
 * state), so a manager process can re-check a remote worker's result without trusting its reward.
 *
 * Implementations: `src/rollouts/environments/` (arithmetic, tool-calc, terminal); each runs the contract
 * suite in `src/rollouts/environments/environment.contract.ts`.
 */
import type { ChatMessage, ToolDefinition } from './chat.js';

/** Held-out tasks are never trained on: `clawrl rollout` trains on `train` and measures on `test`. */
export type TaskSplit = 'train' | 'test';

/**
 * One task, JSON-serialisable end to end (it crosses the bus to workers), so it carries what a
 * worker needs to build the environment and what the verifier needs to check the result.
 */
export interface EnvironmentTask {
  /** Stable across runs and unique within its environment and split. */
  id: string;
  split: TaskSplit;
  /** Environment-specific, JSON only (no functions, no class instances). */
  data: Record<string, unknown>;
}

/** What the agent sees first: the conversation's opening messages and the tools it may call. */
export interface InitialObservation {
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

/** The evidence the verifier reads: JSON only, environment-specific (the answer, a file listing). */
export type EnvironmentOutcome = Record<string, unknown>;

/** The verifier's appraisal. Expected outcomes (no answer found) are data, not errors. */
export interface Verdict {
  /** Outcome reward; the built-in environments give 1 (solved) or 0. */
  reward: number;
  correct: boolean;
  /** One line a person can read: what was expected and what was found. */
  detail: string;
}

export interface EnvironmentStepResult {
  /** Messages that answer the action (tool results, a user's reply); empty when done. */
  observation: ChatMessage[];
  done: boolean;
  /** Present when done: the evidence and the verifier's verdict on it. */
  outcome?: EnvironmentOutcome;
  verdict?: Verdict;
}

/** One rollout's world. Single-use: `initialObservation` once, then `step` until done, then `close`. */
export interface Environment {
  initialObservation(): Promise<InitialObservation>;
  /** Answers one assistant message (text and/or tool calls). An action after done is an error. */
  step(action: ChatMessage): Promise<EnvironmentStepResult>;
  /** Releases what the environment holds (a sandbox directory); safe to call twice. */
  close(): Promise<void>;
}

export interface TaskSourceOptions {
  split: TaskSplit;
  count: number;
  /** Which window of the split: the same seed and offset give the same tasks. */
  seed?: number;
  offset?: number;
}

/** Yields tasks; the `test` split never overlaps the `train` split. */
export interface TaskSource {
  tasks(options: TaskSourceOptions): EnvironmentTask[];
}

/** An environment kind: its tasks, how to build one rollout's world, and its verifier. */
export interface EnvironmentDefinition {
  /** kebab-case; the bus topics are `tasks.<name>` and `results.<name>`. */
  readonly name: string;
  readonly description: string;
  /** The most assistant messages one rollout may take; the driver ends the episode there. */
  readonly maxTurns: number;
  readonly taskSource: TaskSource;
  create(task: EnvironmentTask): Promise<Environment>;
  /** Pure: the same task and outcome always give the same verdict. */
  verify(task: EnvironmentTask, outcome: EnvironmentOutcome): Verdict;
}
