/**
 * `node dist/lab/measure/run-measure-builtin-model.js <model dir> [--samples N] [--judge N] [--no-deployed-judge]`
 * prints the acceptance figures of a built-in model folder (see measure-builtin-model.ts) as JSON on
 * stdout; progress goes to stderr. `--no-deployed-judge` skips the judge as the server runs it.
 */
import { performance } from 'node:perf_hooks';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { defaultMeasureOptions, measureBuiltinModel } from './measure-builtin-model.js';

function numberFlag(args: readonly string[], flag: string, fallback: number): number {
  const index = args.indexOf(flag);
  if (index === -1) return fallback;
  const value = Number(args[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new ClawrlError('configuration_error', `${flag} needs a positive integer`);
  return value;
}

const args = process.argv.slice(2);
const modelDirectory = args[0];
if (modelDirectory === undefined || modelDirectory.startsWith('--')) {
  process.stderr.write('usage: node dist/lab/measure/run-measure-builtin-model.js <model dir> [--samples N] [--judge N] [--no-deployed-judge]\n');
  process.exit(2);
}
const initStarted = performance.now();
await initializeTensorBackend({ backend: 'wasm' });
const backendInitSeconds = Math.round(performance.now() - initStarted) / 1000;
const result = await measureBuiltinModel({
  ...defaultMeasureOptions,
  modelDirectory,
  prompts: numberFlag(args, '--samples', defaultMeasureOptions.prompts),
  judgeExamples: numberFlag(args, '--judge', defaultMeasureOptions.judgeExamples),
  deployedJudge: !args.includes('--no-deployed-judge'),
  log: (line) => process.stderr.write(`measure: ${line}\n`),
});
process.stdout.write(`${JSON.stringify({ ...result, timings: { backendInitSeconds, ...result.timings } }, null, 2)}\n`);
