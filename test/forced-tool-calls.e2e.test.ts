/**
 * A forced tool call on the built-in model, through the official clients of each protocol: the
 * arguments obey the tool's parameter schema (both required keys, numbers), not merely "a JSON
 * object" (`src/model/output-constraint.ts`).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const parameters = {
  type: 'object',
  properties: { a: { type: 'number', description: 'the first addend' }, b: { type: 'number', description: 'the second addend' } },
  required: ['a', 'b'],
  additionalProperties: false,
};
const question = 'What is 3 + 4? Use the add tool.';

/** Valid per the schema: exactly the keys a and b, both numbers. */
function expectAddArguments(value: unknown): void {
  expect(value).toEqual({ a: expect.any(Number), b: expect.any(Number) });
}

let server: ClawrlServer;
beforeAll(async () => {
  server = await startClawrlServer(['--no-train', '--judge', 'rules']);
});
afterAll(async () => {
  await server?.stop();
});

describe('forced tool calls on the built-in model obey the tool schema', () => {
  it.each([{ type: 'function', function: { name: 'add' } } as const, 'required' as const])('chat completions, tool_choice %j', async (toolChoice) => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'add', description: 'Adds two numbers.', parameters } },
      ...(toolChoice === 'required' ? [{ type: 'function' as const, function: { name: 'subtract', description: 'Subtracts b from a.', parameters } }] : []),
    ];
    for (const seed of [1, 2, 3]) {
      const reply = await client.chat.completions.create({ model: 'builtin:tiny', messages: [{ role: 'user', content: question }], tools, tool_choice: toolChoice, max_tokens: 200, seed });
      const call = reply.choices[0]?.message.tool_calls?.[0];
      expect(reply.choices[0]?.finish_reason).toBe('tool_calls');
      expect(call?.type === 'function' && ['add', 'subtract'].includes(call.function.name)).toBe(true);
      expectAddArguments(JSON.parse(call?.type === 'function' ? call.function.arguments : 'null'));
    }
  });

  it('Responses, tool_choice naming the function', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const reply = await client.responses.create({
      model: 'builtin:tiny',
      input: question,
      tools: [{ type: 'function', name: 'add', description: 'Adds two numbers.', parameters, strict: true }],
      tool_choice: { type: 'function', name: 'add' },
      max_output_tokens: 200,
    });
    const call = reply.output.find((item) => item.type === 'function_call');
    expect(call?.type === 'function_call' && call.name).toBe('add');
    expectAddArguments(JSON.parse(call?.type === 'function_call' ? call.arguments : 'null'));
  });

  it.each([{ type: 'tool', name: 'add' } as const, { type: 'any' } as const])('Messages, tool_choice %j', async (toolChoice) => {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
    for (const streamed of [false, true]) {
      const request = {
        model: 'builtin:tiny',
        max_tokens: 200,
        messages: [{ role: 'user' as const, content: question }],
        tools: [{ name: 'add', description: 'Adds two numbers.', input_schema: parameters as Anthropic.Tool.InputSchema }],
        tool_choice: toolChoice,
      };
      const reply = streamed ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
      expect(reply.stop_reason).toBe('tool_use');
      const use = reply.content.find((block) => block.type === 'tool_use');
      expect(use?.type === 'tool_use' && use.name).toBe('add');
      expectAddArguments(use?.type === 'tool_use' ? use.input : null);
    }
  });
});
