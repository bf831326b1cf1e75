import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer, type FakeVllmServerOptions } from './fake-vllm-server.js';
import { decodeTokens, fakeLogprob } from './fake-model.js';
import { createPeftAdapterFiles } from './create-peft-adapter-files.js';

const servers: FakeVllmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: FakeVllmServerOptions = {}): Promise<{ server: FakeVllmServer; client: OpenAI }> {
  const server = await startFakeVllmServer(options);
  servers.push(server);
  return { server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
}

async function fixture(name: string): Promise<string> {
  return readFile(new URL(`../openai-compatible/__fixtures__/${name}`, import.meta.url), 'utf8');
}

function keys(value: unknown): string[] {
  return Object.keys(value as object).sort();
}

function firstChunkWith(text: string, field: string): Record<string, unknown> {
  for (const event of text.split('\n\n')) {
    const data = event.replace(/^data: /, '');
    if (data === '' || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as { choices: Record<string, unknown>[] };
    if (chunk.choices[0]?.[field] !== undefined) return chunk as unknown as Record<string, unknown>;
  }
  throw new Error(`no chunk with ${field}`);
}

async function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as Record<string, unknown>;
}

describe('fake vLLM server', () => {
  it('answers the official openai client in the recorded vLLM non-stream shape', async () => {
    const { client } = await start();
    const completion = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi there' }], logprobs: true, top_logprobs: 2, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0]?.message.content).toBe('You said: hi there');
    const recorded = JSON.parse(await fixture('vllm-chat.json')) as { choices: Record<string, unknown>[] };
    expect(keys(completion)).toEqual(keys(recorded));
    expect(keys(completion.choices[0])).toEqual(keys(recorded.choices[0]));
    expect(keys(completion.choices[0]?.message)).toEqual(keys(recorded.choices[0]?.['message']));
    const wire = completion as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
    expect(decodeTokens(wire.prompt_token_ids)).toBe('user\nhi there\nassistant\n');
    expect(decodeTokens(wire.choices[0]?.token_ids ?? [])).toBe('You said: hi there');
    const first = completion.choices[0]?.logprobs?.content?.[0];
    expect(first?.logprob).toBe(fakeLogprob(wire.prompt_token_ids.at(-1) ?? 0, wire.choices[0]?.token_ids[0] ?? 0));
    expect(first?.top_logprobs).toHaveLength(2);
  });

  it('streams chunks in the recorded vLLM shape, with prompt ids first and ids per chunk', async () => {
    const { client } = await start();
    const stream = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], stream: true, logprobs: true, stream_options: { include_usage: true }, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: Record<string, unknown>[] = [];
    for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
    expect(chunks[0]?.['prompt_token_ids']).toBeDefined();
    const recordedText = await fixture('vllm-chat-stream.chunks.txt');
    const recorded = firstChunkWith(recordedText, 'token_ids') as { choices: Record<string, unknown>[] };
    const tokenChunk = chunks.find((chunk) => (chunk['choices'] as Record<string, unknown>[])[0]?.['token_ids'] !== undefined) as { choices: Record<string, unknown>[] };
    expect(keys(tokenChunk.choices[0])).toEqual(keys(recorded.choices[0]));
    expect(chunks.at(-1)?.['usage']).toMatchObject({ completion_tokens: 8 });
  });

  it('refuses tool_choice "auto" (also the default when tools are given) as stock vLLM does, unless started with the tool-call flags', async () => {
    const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } };
    const { client } = await start();
    const refusal = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set';
    for (const toolChoice of ['auto', undefined] as const) {
      const request = client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'weather?' }], tools: [weather], ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }) });
      await expect(request).rejects.toMatchObject({ status: 400, message: expect.stringContaining(refusal) as unknown });
    }
    const plain = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(plain.choices[0]?.message.content).toBe('You ');
    const none = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'weather?' }], tools: [weather], tool_choice: 'none', max_tokens: 2 });
    expect(none.choices[0]?.finish_reason).toBe('length');
    const flagged = await start({ autoToolChoice: true });
    const called = await flagged.client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'weather?' }], tools: [weather], tool_choice: 'auto' });
    expect(called.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather' } });
  });

  it('streams a tool call the openai client can rebuild', async () => {
    const { client } = await start({ autoToolChoice: true });
    const stream = await client.chat.completions.create({
      model: 'fake-model',
      stream: true,
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    let name = '';
    let argumentsText = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      name += call?.function?.name ?? '';
      argumentsText += call?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(argumentsText)).toEqual({ query: 'What is the weather in Paris?', choice: 0 });
    expect(finish).toBe('tool_calls');
  });

  it('drops the vLLM extras in plain mode, like Ollama', async () => {
    const { client } = await start({ mode: 'plain' });
    const completion = await client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(keys(completion)).toEqual(keys(JSON.parse(await fixture('ollama-chat.json'))));
    expect(completion.choices[0]?.finish_reason).toBe('length');
    expect(completion.choices[0]?.message.content).toBe('You ');
  });

  it('serves SGLang /generate in the recorded shape', async () => {
    const { server } = await start({ mode: 'sglang' });
    const answer = await postJson(`${server.url}/generate`, { input_ids: [2, 10, 11], sampling_params: { max_new_tokens: 0 }, return_logprob: true, logprob_start_len: 1, top_logprobs_num: 2 });
    const recorded = JSON.parse(await fixture('sglang-generate.json')) as { meta_info: unknown };
    expect(keys(answer)).toEqual(keys(recorded));
    const meta = answer['meta_info'] as Record<string, unknown>;
    for (const key of ['finish_reason', 'prompt_tokens', 'completion_tokens', 'weight_version', 'input_token_logprobs', 'output_token_logprobs', 'input_top_logprobs', 'output_top_logprobs']) {
      expect(meta[key], key).toBeDefined();
    }
    expect(meta['input_token_logprobs']).toEqual([
      [fakeLogprob(2, 10), 10, null],
      [fakeLogprob(10, 11), 11, null],
    ]);
  });

  it('lists loaded adapters as models and refuses adapters that are not on disk', async () => {
    const { server } = await start();
    expect(await postJson(`${server.url}/v1/load_lora_adapter`, { lora_name: 'a', lora_path: '/nonexistent/adapter' })).toMatchObject({ error: { code: 404, type: 'NotFoundError' } });
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((model) => model.id)).toEqual(['fake-model']);
  });

  it('holds adapters as the servers do: SGLang refuses a load beyond --max-loaded-loras, vLLM lets one leave its cache and reads its folder again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'clawrl-fake-adapters-'));
    try {
      const folders = await Promise.all(
        [1, 2, 3].map(async (seed) => {
          const folder = join(root, `a${seed}`);
          await mkdir(folder);
          for (const [name, bytes] of Object.entries(createPeftAdapterFiles({ baseModel: 'fake-model', seed }))) await writeFile(join(folder, name), bytes);
          return folder;
        }),
      );
      const sglang = (await start({ mode: 'sglang', maxLoadedAdapters: 2 })).server;
      for (const [index, folder] of folders.slice(0, 2).entries()) expect(await postJson(`${sglang.url}/load_lora_adapter`, { lora_name: `a${index + 1}`, lora_path: folder })).toMatchObject({ success: true });
      expect(await postJson(`${sglang.url}/load_lora_adapter`, { lora_name: 'a3', lora_path: folders[2] })).toMatchObject({ success: false, error_message: expect.stringContaining('Maximum number of loaded LoRA adapters is 2') as unknown });
      expect(await postJson(`${sglang.url}/unload_lora_adapter`, { lora_name: 'a1' })).toMatchObject({ success: true });
      expect(await postJson(`${sglang.url}/load_lora_adapter`, { lora_name: 'a3', lora_path: folders[2] })).toMatchObject({ success: true });
      expect(sglang.peakAdapters).toBe(2);

      const { server: vllm, client } = await start({ maxLoadedAdapters: 2 });
      for (const [index, folder] of folders.entries()) expect(await (await fetch(`${vllm.url}/v1/load_lora_adapter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lora_name: `a${index + 1}`, lora_path: folder }) })).text()).toContain('added successfully');
      expect(vllm.peakAdapters).toBe(3);
      // a1 left the cache of two when a3 came: serving it reads its folder again, and fails once the folder is gone.
      await client.chat.completions.create({ model: 'a1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
      expect(vllm.diskReloads).toBe(1);
      await client.chat.completions.create({ model: 'a1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
      expect(vllm.diskReloads).toBe(1);
      await rm(folders[1] ?? '', { recursive: true });
      await expect(client.chat.completions.create({ model: 'a2', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })).rejects.toMatchObject({ status: 400 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
