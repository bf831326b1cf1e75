/**
 * `clawrl rejudge [--since <time>] [--judge ...]`: re-scores stored turns with another judge or
 * prompt version, keeping every earlier judgement (see `rejudgeTurns`). Runs against the store
 * directly, beside or without a running server.
 */
import { methodUsesHints } from '../../core/rl/build-samples.js';
import { rejudgeTurns, type RejudgeTurnsResult } from '../../judge/rejudge-turns.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { SampleMethod } from '../../spec/records.js';
import type { JudgeConfiguration } from '../wiring/create-judge.js';
import { createJudgeEngine } from '../wiring/create-judge-engine.js';
import { createJudgeWithRedaction } from '../wiring/create-judge-with-redaction.js';
import { createInferenceEngine, type EngineConfiguration } from '../wiring/create-inference-engine.js';
import { openRecordStore, type StoreConfiguration } from '../wiring/open-record-store.js';

export interface RejudgeConfiguration extends JudgeConfiguration, StoreConfiguration, EngineConfiguration {
  method: SampleMethod;
  /** `--redact`: the judge's output is redacted by it before it is kept. */
  redact: string;
  /** Epoch milliseconds or any date `Date.parse` reads; undefined for every turn. */
  since: string | undefined;
  force: boolean;
}

/** `--since`: epoch milliseconds, or a date such as `2026-05-01` or `2026-05-01T12:00:00Z`. */
export function parseSince(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = /^\d+$/.test(text.trim()) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(value)) {
    throw new ClawrlError('configuration_error', `--since must be epoch milliseconds or a date, got ${JSON.stringify(text)}.`, { param: 'since' });
  }
  return value;
}

export async function runRejudgeCommand(configuration: RejudgeConfiguration, logger: Logger): Promise<RejudgeTurnsResult> {
  const since = parseSince(configuration.since);
  // A dedicated judge model (builtin:tiny-judge for builtin:tiny) needs only its own engine; else the served one judges.
  const judgeEngine = await createJudgeEngine(configuration, { logger });
  const engine: InferenceEngine | undefined = judgeEngine ?? (configuration.judge === 'policy' ? await createInferenceEngine(configuration, { logger }) : undefined);
  // Re-judging reads what a server recorded: a --data folder without a store is a mistake, not an empty store.
  const store = await openRecordStore(configuration, { existing: true });
  try {
    const judge = createJudgeWithRedaction(configuration, engine);
    logger.info('re-judging stored turns', { judge: judge.judgeId, judgeModel: judge.judgeModel, promptVersion: judge.promptVersion });
    return await rejudgeTurns({
      store,
      judge,
      wantHint: methodUsesHints(configuration.method),
      force: configuration.force,
      now: () => Date.now(),
      logger,
      ...(since === undefined ? {} : { since }),
    });
  } finally {
    await store.close();
    await engine?.close();
  }
}
