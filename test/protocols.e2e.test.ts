/**
 * The real server, started as a user starts it in front of a vLLM-shaped upstream, driven by the
 * official clients of the other two protocols: `openai`'s Responses API and `@anthropic-ai/sdk`'s
 * Messages API. Two turns of one conversation, resent whole with no session header, land in one
 * session, and the first turn's next state is the second user message.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useClawrlOnFakeVllm } from './testing/clawrl-on-fake-vllm.js';

const running = useClawrlOnFakeVllm();

describe('the Responses and Messages APIs end to end with the official clients', () => {
  it.each([false, true])('stitches two Responses turns resent whole into one session (stream %s)', async (streamed) => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: `hello one two ${String(streamed)}` }];
    const create = async (items: OpenAI.Responses.ResponseInputItem[]) =>
      streamed
        ? await client.responses.stream({ model: 'fake-model', instructions: 'You are terse.', input: items }).finalResponse()
        : await client.responses.create({ model: 'fake-model', instructions: 'You are terse.', input: items });
    const first = await create(input);
    expect(first.output_text).not.toBe('');
    const second = await create([...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'and three?' }]);
    const firstTurn = await running.adminTurn(first.id.slice('resp_'.length));
    const secondTurn = await running.adminTurn(second.id.slice('resp_'.length));
    expect(secondTurn.sessionId).toBe(firstTurn.sessionId);
    expect(firstTurn.nextState).toEqual([{ role: 'user', content: 'and three?' }]);
    expect((firstTurn.promptTokenIds as number[]).length).toBeGreaterThan(0);
    expect((firstTurn.responseTokenIds as number[]).length).toBe((firstTurn.logprobs as number[]).length);
  });

  it('continues a response by previous_response_id on the real server', async () => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const first = await client.responses.create({ model: 'fake-model', input: 'count one two' });
    const second = await client.responses.create({ model: 'fake-model', input: 'now three', previous_response_id: first.id });
    const firstTurn = await running.adminTurn(first.id.slice('resp_'.length));
    expect((await running.adminTurn(second.id.slice('resp_'.length))).sessionId).toBe(firstTurn.sessionId);
    expect(firstTurn.nextState).toEqual([{ role: 'user', content: 'now three' }]);
  });

  it.each([false, true])('stitches two Messages turns resent whole into one session (stream %s)', async (streamed) => {
    const client = new Anthropic({ baseURL: running.server.url, apiKey: 'none', maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `hello four five ${String(streamed)}` }];
    const create = async (conversation: Anthropic.MessageParam[]) => {
      const request = { model: 'fake-model', max_tokens: 32, system: 'You are terse.', messages: conversation };
      return streamed ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
    };
    const first = await create(messages);
    expect(first.content[0]).toMatchObject({ type: 'text' });
    const second = await create([...messages, { role: 'assistant', content: first.content }, { role: 'user', content: 'and six?' }]);
    const firstTurn = await running.adminTurn(first.id.slice('msg_'.length));
    const secondTurn = await running.adminTurn(second.id.slice('msg_'.length));
    expect(secondTurn.sessionId).toBe(firstTurn.sessionId);
    expect(firstTurn.nextState).toEqual([{ role: 'user', content: 'and six?' }]);
    expect(first.usage.input_tokens).toBe((firstTurn.promptTokenIds as number[]).length);
  });

  it('counts tokens through the engine and answers errors in Anthropic’s shape', async () => {
    const client = new Anthropic({ baseURL: running.server.url, apiKey: 'none', maxRetries: 0 });
    const counted = await client.messages.countTokens({ model: 'fake-model', messages: [{ role: 'user', content: 'count these words' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const error = await client.messages.create({ model: 'fake-model', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
