/**
 * Configuration as a user meets it, through the real CLI: served model names with the official
 * `openai` client, the built-in model's recipe applied by default and overridden by a flag, a
 * config file shared by `serve` and `gateway`, and serve refusing an experiment-only flag.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { assertBuilt, cliPath, createDataDirectory, repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const run = promisify(execFile);
let upstream: FakeVllmServer;

beforeAll(async () => {
  upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
});

afterAll(async () => {
  await upstream?.close();
});

describe('--served-model-name', () => {
  let server: ClawrlServer;
  beforeAll(async () => {
    server = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model', '--served-model-name', 'tutor', '--served-model-name', 'assistant']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists, retrieves and answers under the given names only, echoing the name asked for', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none' });
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['tutor', 'assistant']);
    expect(await client.models.retrieve('assistant')).toMatchObject({ id: 'assistant', object: 'model' });
    const missing = await client.models.retrieve('fake-model').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const completion = await client.chat.completions.create({ model: 'assistant', messages: [{ role: 'user', content: 'hello one two' }] });
    expect(completion.model).toBe('assistant');
    expect(upstream.requests.at(-1)?.body).toMatchObject({ model: 'fake-model' });
    const refused = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("The model 'fake-model' does not exist");
  });

  it('takes the names from CLAWRL_SERVED_MODEL_NAME, and defaults to --model', async () => {
    const named = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model'], { environment: { CLAWRL_SERVED_MODEL_NAME: 'one,two' } });
    const plain = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model']);
    try {
      const ids = async (url: string) => ((await (await fetch(`${url}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.map((model) => model.id);
      expect(await ids(named.url)).toEqual(['one', 'two']);
      expect(await ids(plain.url)).toEqual(['fake-model']);
      const unknown = await fetch(`${plain.url}/v1/models/Qwen/Qwen3-4B`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ error: { message: "The model 'Qwen/Qwen3-4B' does not exist.", param: 'model' } });
    } finally {
      await named.stop();
      await plain.stop();
    }
  });
});

describe('the recipe', () => {
  it("trains builtin:tiny with models/builtin-tiny/recipe.json unless a flag says otherwise", async () => {
    const recipe = await startClawrlServer([]);
    const overridden = await startClawrlServer(['--train-every', '8']);
    try {
      expect(recipe.stderr()).toContain(`recipe file=${path.join(repositoryRoot, 'models', 'builtin-tiny', 'recipe.json')}`);
      expect(recipe.stderr()).toMatch(/training on policyScope=global trainParams=full learningRate=0\.001 learningRateHalfLife=null trainEvery=4 .*anchorCoefficient=0\.5 anchorTopK=8/);
      expect(overridden.stderr()).toMatch(/training on policyScope=global trainParams=full learningRate=0\.001 .*trainEvery=8 /);
    } finally {
      await recipe.stop();
      await overridden.stop();
    }
  });

  it('keeps experiment-only flags off serve', async () => {
    assertBuilt();
    const refused = await run(process.execPath, [cliPath, 'serve', '--anchor-coefficient', '0.5'], { timeout: 20_000 }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in refused ? refused.code : 0).not.toBe(0);
    expect(refused.stderr).toContain("unknown option '--anchor-coefficient'");
  });
});

describe('a config file shared by serve and gateway', () => {
  it('starts clawrl gateway with a note on the keys of other components', async () => {
    const data = createDataDirectory();
    const config = path.join(data, 'clawrl.json');
    writeFileSync(config, JSON.stringify({ engine: { engine: 'vllm', upstream: upstream.url, model: 'fake-model' }, gateway: { port: 0 }, trainer: { trainEvery: 4 }, judge: 'rules' }));
    const child = spawn(process.execPath, [cliPath, 'gateway', '--config', config, '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (part: Buffer) => (errors += part.toString('utf8')));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`clawrl gateway did not start:\n${errors}`)), 30_000);
        let output = '';
        child.stdout.on('data', (part: Buffer) => {
          output += part.toString('utf8');
          const match = /clawrl ready (\S+)/.exec(output);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.once('exit', (code) => reject(new Error(`clawrl gateway exited with ${code}:\n${errors}`)));
      });
      expect(errors).toContain('config file: ignoring options of other components: trainEvery, judge');
      expect((await fetch(`${url}/v1/models`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
