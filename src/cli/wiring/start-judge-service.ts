/**
 * The judge worker of `clawrl serve` and `clawrl judge`: picks the judge named by `--judge` and
 * starts the worker that claims queued turns, judges them and builds their samples. Closing
 * aborts the turns in flight; they stay queued for the next worker.
 */
import { defaultMemoryTokens, type UserMemoryMode } from '../../core/user-memory-context.js';
import { defaultMemoryEntriesPerUser } from '../../core/user-memory-text.js';
import { createJudgeWorker } from '../../judge/create-judge-worker.js';
import type { JudgeMemory } from '../../judge/judge-memory.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { SampleMethod } from '../../spec/records.js';
import type { JudgeConfiguration } from './create-judge.js';
import { createJudgeWithRedaction } from './create-judge-with-redaction.js';
import { createId } from './start-gateway-service.js';

export interface JudgeServiceConfiguration extends JudgeConfiguration {
  method: SampleMethod;
  /** `--redact`: what the judge's output is redacted by before it is kept or feeds a teacher prompt. */
  redact: string;
  /** k of OPD's support set; 0 distils on the sampled token only. */
  opdSupportK: number;
  /** With `replay`, the `heldOutShare` of sessions is judged but never trained on (the replay gate's evaluation set). */
  gate?: 'replay' | 'none';
  heldOutShare?: number;
  /** `user`: each user's turn was sampled by that user's version, and its OPD teacher is scored under it. */
  policyScope?: 'global' | 'user';
  /** `--user-memory` and its bounds: the judge adds accepted hints to users' memory, and teaches with it. */
  userMemory?: UserMemoryMode;
  userMemoryEntries?: number;
  userMemoryTokens?: number;
}

/** The judge's part of each user's memory; absent when `--user-memory` is off. */
export function judgeMemoryOf(configuration: Pick<JudgeServiceConfiguration, 'userMemory' | 'userMemoryEntries' | 'userMemoryTokens'>, store: RecordStore): JudgeMemory | undefined {
  const mode = configuration.userMemory ?? 'off';
  if (mode === 'off') return undefined;
  return {
    store,
    mode,
    maximumEntries: configuration.userMemoryEntries ?? defaultMemoryEntriesPerUser,
    maximumTokens: configuration.userMemoryTokens ?? defaultMemoryTokens,
  };
}

/** The share of sessions held out of training: only the replay gate needs any. */
export function heldOutShareOf(configuration: Pick<JudgeServiceConfiguration, 'gate' | 'heldOutShare'>): number {
  return configuration.gate === 'replay' ? (configuration.heldOutShare ?? 0) : 0;
}

export interface RunningJudge {
  close(): Promise<void>;
}

/** Whether the judge process needs an inference engine: to judge with the policy, or to score OPD teachers. */
export function judgeNeedsEngine(configuration: Pick<JudgeServiceConfiguration, 'judge' | 'method'>): boolean {
  return configuration.judge === 'policy' || configuration.method !== 'rl';
}

export function startJudgeService(
  configuration: JudgeServiceConfiguration,
  dependencies: {
    store: RecordStore;
    /** The served engine: OPD scores its teachers there, and `--judge policy` judges with it when no judge engine is given. */
    engine: InferenceEngine | undefined;
    /** The dedicated judge model's engine (`createJudgeEngine`), when there is one. */
    judgeEngine?: InferenceEngine | undefined;
    logger: Logger;
  },
): RunningJudge {
  const judge = createJudgeWithRedaction(configuration, dependencies.judgeEngine ?? dependencies.engine);
  const memory = judgeMemoryOf(configuration, dependencies.store);
  const worker = createJudgeWorker({
    store: dependencies.store,
    ...(dependencies.engine === undefined ? {} : { engine: dependencies.engine }),
    logger: dependencies.logger,
    judge,
    method: configuration.method,
    supportTopK: configuration.opdSupportK,
    heldOutShare: heldOutShareOf(configuration),
    teacherUnderTurnVersion: configuration.policyScope === 'user',
    ...(memory === undefined ? {} : { memory }),
    now: () => Date.now(),
    createId,
    // Unique per process: two judges never hold leases in each other's name.
    workerId: createId('judge'),
  });
  worker.start();
  return { close: () => worker.close() };
}
