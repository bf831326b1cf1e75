import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import { createChatTemplate, toTemplateMessage, toTemplateTool } from './chat-template.js';
import { chatmlTemplate } from './chatml-template.js';

const chatml = createChatTemplate({ source: chatmlTemplate, eosToken: '<|im_end|>' });

const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Get the weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const weatherToolJson =
  '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';
const toolInstructions =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  weatherToolJson +
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

const toolConversation: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris and Oslo?' },
  {
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_2', name: 'get_weather', arguments: '{"city": "Oslo"}' },
    ],
  },
  { role: 'tool', content: '{"temperature": 21}', toolCallId: 'call_1' },
  { role: 'tool', content: '{"temperature": 3}', toolCallId: 'call_2' },
  { role: 'assistant', content: 'Paris 21, Oslo 3.' },
  { role: 'user', content: 'Thanks! And Rome?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_3', name: 'get_weather', arguments: '{"city":"Rome"}' }] },
  { role: 'tool', content: 'sunny', toolCallId: 'call_3' },
  { role: 'assistant', content: 'Rome is sunny.' },
];

const expectedToolConversation =
  '<|im_start|>system\nYou are terse.\n\n' +
  toolInstructions +
  '<|im_start|>user\nWeather in Paris and Oslo?<|im_end|>\n' +
  '<|im_start|>assistant\nChecking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\n{"temperature": 21}\n</tool_response>\n<tool_response>\n{"temperature": 3}\n</tool_response><|im_end|>\n' +
  '<|im_start|>assistant\nParis 21, Oslo 3.<|im_end|>\n' +
  '<|im_start|>user\nThanks! And Rome?<|im_end|>\n' +
  '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n' +
  '<|im_start|>assistant\nRome is sunny.<|im_end|>\n';

describe('chatmlTemplate', () => {
  it('renders a system and user turn with the generation prompt', () => {
    const text = chatml.render({
      messages: [
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'Hi 😀' },
      ],
    });
    expect(text).toBe('<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi 😀<|im_end|>\n<|im_start|>assistant\n');
  });

  it('adds no system turn of its own and can leave the generation prompt out', () => {
    const text = chatml.render({ messages: [{ role: 'user', content: 'Hi' }], addGenerationPrompt: false });
    expect(text).toBe('<|im_start|>user\nHi<|im_end|>\n');
  });

  it('lists tools in a system turn even without a system message', () => {
    const text = chatml.render({ messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool] });
    expect(text).toBe('<|im_start|>system\n' + toolInstructions + '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('renders tool calls, grouped tool results and a multi-turn conversation', () => {
    const text = chatml.render({ messages: toolConversation, tools: [weatherTool], addGenerationPrompt: false });
    expect(text).toBe(expectedToolConversation);
  });

  it('writes arguments that are not valid JSON verbatim', () => {
    const text = chatml.render({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{"a": 1' }] },
      ],
      addGenerationPrompt: false,
    });
    expect(text).toContain('<tool_call>\n{"name": "f", "arguments": {"a": 1}\n</tool_call><|im_end|>\n');
  });

  it('renders later system messages in place', () => {
    const text = chatml.render({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: 'b' },
      ],
      addGenerationPrompt: false,
    });
    expect(text).toBe('<|im_start|>user\na<|im_end|>\n<|im_start|>system\nb<|im_end|>\n');
  });

  it('makes the rendering before each assistant reply a prefix of the rendering after it', () => {
    for (const tools of [[], [weatherTool]]) {
      for (let index = 0; index < toolConversation.length; index++) {
        if (toolConversation[index]?.role !== 'assistant') continue;
        const before = chatml.render({ messages: toolConversation.slice(0, index), tools });
        const after = chatml.render({ messages: toolConversation.slice(0, index + 1), tools });
        const later = chatml.render({ messages: toolConversation, tools, addGenerationPrompt: false });
        expect(after.startsWith(before)).toBe(true);
        expect(later.startsWith(before)).toBe(true);
      }
    }
  });

  it('raises for an empty conversation and an unknown role', () => {
    expect(() => chatml.render({ messages: [] })).toThrowError(/no messages/);
    try {
      chatml.render({ messages: [{ role: 'developer' as ChatMessage['role'], content: 'x' }] });
      expect.unreachable();
    } catch (error) {
      expect(ClawrlError.isInstance(error)).toBe(true);
      expect(ClawrlError.isInstance(error) && error.code).toBe('invalid_request');
      expect(String(error)).toContain('Unknown message role: developer');
    }
  });
});

describe('createChatTemplate with published templates', () => {
  const qwenConfig = JSON.parse(
    readFileSync(new URL('./__fixtures__/chatml-model/tokenizer_config.json', import.meta.url), 'utf8'),
  ) as { chat_template: string };
  const llamaConfig = JSON.parse(
    readFileSync(new URL('./__fixtures__/llama3-model/tokenizer_config.json', import.meta.url), 'utf8'),
  ) as { chat_template: string };

  it('renders Qwen 2.5 tool calls, quoting invalid arguments as its template does', () => {
    const qwen = createChatTemplate({ source: qwenConfig.chat_template });
    const text = qwen.render({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'a', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: 'b', name: 'broken', arguments: 'not json' },
          ],
        },
        { role: 'tool', content: 'sunny', toolCallId: 'a' },
      ],
      tools: [weatherTool],
    });
    expect(text).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n' +
        toolInstructions +
        '<|im_start|>user\nWeather?<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "broken", "arguments": "not json"}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('renders Llama 3 with its bos_token variable and trims content', () => {
    const llama = createChatTemplate({ source: llamaConfig.chat_template, bosToken: '<|begin_of_text|>' });
    const text = llama.render({
      messages: [
        { role: 'system', content: 'Be brief. ' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(text).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  it('renders an unset bos_token as nothing', () => {
    const template = createChatTemplate({ source: '[{{ bos_token }}|{{ eos_token }}]' });
    expect(template.render({ messages: [] })).toBe('[|]');
  });

  it('uses the tool_use template only when tools are given', () => {
    const template = createChatTemplate({ source: 'plain', toolUseSource: 'tools:{{ tools | length }}' });
    expect(template.render({ messages: [] })).toBe('plain');
    expect(template.render({ messages: [], tools: [weatherTool] })).toBe('tools:1');
  });

  it('passes extra variables and supports raise_exception from any template', () => {
    const template = createChatTemplate({
      source: "{% if not enable_thinking %}{{ raise_exception('thinking required') }}{% endif %}ok",
    });
    expect(template.render({ messages: [], variables: { enable_thinking: true } })).toBe('ok');
    expect(() => template.render({ messages: [] })).toThrowError(/thinking required/);
  });

  it('rejects a template that does not parse as a configuration error', () => {
    try {
      createChatTemplate({ source: '{% if %}' });
      expect.unreachable();
    } catch (error) {
      expect(ClawrlError.isInstance(error) && error.code).toBe('configuration_error');
    }
  });
});

describe('toTemplateMessage and toTemplateTool', () => {
  it('converts domain messages to the OpenAI dictionary shape with parsed arguments', () => {
    expect(
      toTemplateMessage({
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'f', arguments: '{"x":[1,2]}' },
          { id: 'c2', name: 'g', arguments: '{oops' },
        ],
      }),
    ).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: { x: [1, 2] } } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{oops' } },
      ],
    });
    expect(toTemplateMessage({ role: 'tool', content: 'r', toolCallId: 'c1', name: 'f' })).toEqual({
      role: 'tool',
      content: 'r',
      tool_call_id: 'c1',
      name: 'f',
    });
    expect(toTemplateMessage({ role: 'assistant', content: 'x', toolCalls: [] })).toEqual({ role: 'assistant', content: 'x' });
  });

  it('converts tool definitions, leaving absent fields out', () => {
    expect(toTemplateTool({ name: 'f' })).toEqual({ type: 'function', function: { name: 'f' } });
    expect(toTemplateTool(weatherTool).function.parameters).toBe(weatherTool.parameters);
  });
});
