// How often a served policy solves an environment's held-out problems: each of `--count` test-split
// tasks sampled `--samples` times at `--temperature` (0: greedy), through a running server's
// OpenAI-compatible API as side turns (recorded, never trained on). Prints the share solved by one
// sample (pass@1) and by at least one of the samples (pass@k); `--out <file>` keeps every reply with
// its verdict, to read what the wrong ones got wrong. Single-turn environments only (arithmetic).
//
//   node scripts/solve-rates/solve-rates.mjs --url http://127.0.0.1:8400 --count 24 --samples 8 --temperature 1.0
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { loadEnvironment } from '../../dist/rollouts/environments/environment-registry.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8400' },
    env: { type: 'string', default: 'arithmetic' },
    count: { type: 'string', default: '40' },
    samples: { type: 'string', default: '8' },
    temperature: { type: 'string', default: '1.0' },
    'max-tokens': { type: 'string', default: '200' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
const definition = await loadEnvironment(values.env, process.cwd());
if (definition.maxTurns !== 1) throw new Error(`${values.env} takes several turns; this script runs single-turn environments`);
const client = new OpenAI({ baseURL: `${values.url}/v1`, apiKey: process.env.CLAWRL_API_KEY ?? 'none' });
const model = (await client.models.list()).data[0].id;
const samples = Number(values.samples);
const tasks = definition.taskSource.tasks({ split: 'test', count: Number(values.count), seed: Number(values.seed) });

async function solve(task, sample) {
  const environment = await definition.create(task);
  const { messages } = await environment.initialObservation();
  const completion = await client.chat.completions.create(
    { model, messages, temperature: Number(values.temperature), max_tokens: Number(values['max-tokens']), seed: 1000 + sample },
    { headers: { 'x-turn-type': 'side', 'x-session-id': `solve-rates-${task.id}-${sample}` } },
  );
  const content = completion.choices[0].message.content ?? '';
  const { verdict } = await environment.step({ content });
  await environment.close();
  return { content, correct: verdict.correct, detail: verdict.detail };
}

const perTask = [];
for (const task of tasks) {
  const replies = await Promise.all(Array.from({ length: samples }, (_, sample) => solve(task, sample)));
  perTask.push({ id: task.id, question: task.data.question, solved: replies.filter((reply) => reply.correct).length, replies });
}
const solved = perTask.reduce((sum, task) => sum + task.solved, 0);
console.log(JSON.stringify({
  model, env: values.env, tasks: tasks.length, samples, temperature: Number(values.temperature),
  passAt1: solved / (tasks.length * samples),
  passAtK: perTask.filter((task) => task.solved > 0).length / tasks.length,
  solvedPerTask: perTask.map((task) => task.solved),
}));
if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(perTask, null, 1)}\n`);
