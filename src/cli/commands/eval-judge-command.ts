/**
 * `clawrl eval judge`: the judge the server would run (`--judge policy` over `--model`, or over
 * the judge model `--judge-model` names — builtin:tiny-judge by default for builtin:tiny — with
 * the built-in judge options for the built-in models; or `--judge openai` / `rules`), measured on
 * held-out next states: the shipped `models/builtin-tiny/judge-heldout.jsonl` (worded apart from
 * the built-in model's training corpus) or `--heldout <file>` of the same shape. It prints the
 * majority verdict's accuracy overall and per kind and every row judged wrong with its votes.
 * The judging runs in the engine's worker threads, and this is a command, not an HTTP handler.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseHeldoutNextStates, type HeldoutNextState } from '../../lab/measure/judge-heldout-set.js';
import { formatJudgeHeldoutResult, measureJudgeHeldout, type JudgeHeldoutResult } from '../../lab/measure/measure-judge-heldout.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import { createJudge, type JudgeConfiguration } from '../wiring/create-judge.js';
import { createJudgeEngine } from '../wiring/create-judge-engine.js';
import { builtinModelDirectory, createInferenceEngine, type EngineConfiguration } from '../wiring/create-inference-engine.js';
import { integerOption } from './eval-command.js';

/** The held-out next states shipped beside the built-in model. */
export const shippedHeldoutFile = path.join(builtinModelDirectory, 'judge-heldout.jsonl');

export interface EvalJudgeOptions {
  heldout?: string;
  limit?: string;
  out?: string;
}

export interface EvalJudgeResult extends JudgeHeldoutResult {
  heldoutFile: string;
  model: string;
}

function readHeldout(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ClawrlError('configuration_error', `Cannot read the held-out file ${file}: ${error instanceof Error ? error.message : String(error)}`, { param: 'heldout', cause: error });
  }
}

export async function runEvalJudgeCommand(
  configuration: JudgeConfiguration & EngineConfiguration,
  options: EvalJudgeOptions,
  logger: Logger,
): Promise<EvalJudgeResult> {
  const heldoutFile = path.resolve(options.heldout ?? shippedHeldoutFile);
  const all = parseHeldoutNextStates(readHeldout(heldoutFile), heldoutFile);
  const limit = options.limit === undefined ? all.length : Math.min(all.length, integerOption('limit', options.limit, 1));
  // Evenly spaced rows, so a short run still meets every kind of a file written kind by kind.
  const rows = Array.from({ length: limit }, (_, index) => all[Math.floor((index * all.length) / limit)] as HeldoutNextState);
  // A dedicated judge model (builtin:tiny-judge for builtin:tiny) needs only its own engine; else the served one judges.
  const judgeEngine = await createJudgeEngine(configuration, { logger });
  const engine: InferenceEngine | undefined = judgeEngine ?? (configuration.judge === 'policy' ? await createInferenceEngine(configuration, { logger }) : undefined);
  try {
    const judge = createJudge(configuration, engine);
    logger.info('judging held-out next states', { file: heldoutFile, rows: rows.length, judge: judge.judgeId, judgeModel: judge.judgeModel });
    const measured = await measureJudgeHeldout({ judge, rows, log: (line) => logger.info(line) });
    const result: EvalJudgeResult = { ...measured, heldoutFile, model: configuration.model };
    if (options.out !== undefined) {
      mkdirSync(options.out, { recursive: true });
      writeFileSync(path.join(options.out, 'judge-heldout.json'), `${JSON.stringify(result, null, 2)}\n`);
      writeFileSync(path.join(options.out, 'judge-heldout.txt'), `${formatJudgeHeldoutResult(result)}\n`);
      logger.info(`wrote judge-heldout.json and judge-heldout.txt to ${options.out}`);
    }
    return result;
  } finally {
    await engine?.close();
  }
}
