/** `clawrl serve --engine local --model <HF folder>`: the embedded engine end to end through the gateway. */
import OpenAI from 'openai';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let folder: string;
let server: ClawrlServer;

beforeAll(async () => {
  folder = createTinyModelFolder();
  // The model's own sampling defaults, as a published model ships them.
  writeFileSync(path.join(folder, 'generation_config.json'), JSON.stringify({ temperature: 0.5, top_p: 0.9 }));
  server = await startClawrlServer(['--engine', 'local', '--model', folder]);
});
afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe('the embedded engine behind the gateway', () => {
  it('serves streaming and non-streaming completions with exact token ids recorded', async () => {
    const model = path.basename(folder);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none' });
    const { data, response } = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 12, logprobs: true })
      .withResponse();
    expect(data.choices[0]?.logprobs?.content?.length).toBeGreaterThan(0);
    const turn = (await (await fetch(`${server.url}/admin/turns/${response.headers.get('x-clawrl-turn-id')}`)).json()) as {
      promptTokenIds: number[];
      responseTokenIds: number[];
      logprobs: number[];
      trainable: boolean;
      sampling: { temperature: number; topP: number };
    };
    expect(turn.trainable).toBe(true);
    // The request named no sampling, so the model's generation_config.json decided it.
    expect(turn.sampling).toMatchObject({ temperature: 0.5, topP: 0.9 });
    expect(turn.promptTokenIds.length).toBeGreaterThan(0);
    expect(turn.logprobs).toEqual(data.choices[0]?.logprobs?.content?.map((entry) => entry.logprob));

    // Seeded: an unseeded random model sometimes ends its reply after one token.
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi again' }], max_tokens: 12, seed: 3, stream: true });
    let chunks = 0;
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) chunks += 1;
    expect(chunks).toBeGreaterThan(1);
  });

  it('keeps answering health checks while generating (tensor work is off the event loop)', async () => {
    const model = path.basename(folder);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none' });
    let generating = true;
    const long = client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'tell me a story' }], max_tokens: 400, n: 4, stream: true })
      .then(async (stream) => {
        for await (const _chunk of stream) {
          // consume
        }
        generating = false;
      });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    // The health answer arrived while the worker was still sampling.
    expect(generating).toBe(true);
    await long;
  });
});
