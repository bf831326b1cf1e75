import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AssistantOutputDelta } from '../spec/chat-renderer.js';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import { chatmlTemplate } from './chatml-template.js';
import { createChatRenderer, loadChatRenderer } from './create-chat-renderer.js';
import { createTokenizer } from './tokenizer.js';
import { parseTokenizerConfig } from './tokenizer-config.js';

const chatmlFolder = fileURLToPath(new URL('./__fixtures__/chatml-model', import.meta.url));
const llamaFolder = fileURLToPath(new URL('./__fixtures__/llama3-model', import.meta.url));

function readFixture(file: string): unknown {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/chatml-model/${file}`, import.meta.url), 'utf8'));
}

const tokenizer = createTokenizer({
  tokenizerJson: readFixture('tokenizer.json'),
  tokenizerConfig: parseTokenizerConfig(readFixture('tokenizer_config.json')),
});
const renderer = createChatRenderer({
  tokenizer,
  chatTemplate: chatmlTemplate,
  toolCallParser: { createId: () => 'call_fixed' },
});
const id = (token: string): number => {
  const value = tokenizer.tokenId(token);
  if (value === undefined) throw new Error(`no token ${token}`);
  return value;
};

const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
};

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are a weather bot.' },
  { role: 'user', content: 'Paris? 🌧' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
  { role: 'tool', content: '{"sky": "rain"}', toolCallId: 'call_a' },
  { role: 'assistant', content: 'Rain in Paris.' },
  { role: 'user', content: 'Merci !' },
];

describe('createChatRenderer', () => {
  it('tokenizes the rendered template without adding a bos, specials as single ids', () => {
    const ids = renderer.renderPrompt(conversation, [weatherTool]);
    const text = renderer.renderText(conversation, [weatherTool]);
    expect(tokenizer.decode(ids)).toBe(text);
    expect(ids[0]).toBe(id('<|im_start|>'));
    expect(ids.at(-1)).toBe(tokenizer.encode('\n', { addSpecialTokens: false })[0]);
    expect(ids.filter((token) => token === id('<|im_end|>'))).toHaveLength(6);
    expect(ids).toContain(id('<tool_call>'));
  });

  it('keeps the token ids of earlier turns when the conversation grows', () => {
    for (let index = 1; index < conversation.length; index++) {
      if (conversation[index]?.role !== 'assistant') continue;
      const before = renderer.renderPrompt(conversation.slice(0, index), [weatherTool]);
      const after = renderer.renderPrompt(conversation, [weatherTool]);
      expect(after.slice(0, before.length)).toEqual(before);
    }
  });

  it('stops on eos and <|im_end|>, plus extra ids, each once', () => {
    expect(renderer.stopTokenIds).toEqual([id('<|im_end|>')]);
    const withExtra = createChatRenderer({
      tokenizer,
      chatTemplate: chatmlTemplate,
      stopTokenIds: [id('<|endoftext|>'), id('<|im_end|>')],
    });
    expect(withExtra.stopTokenIds).toEqual([id('<|im_end|>'), id('<|endoftext|>')]);
  });

  it('encodes without bos, decodes without special tokens and names single tokens', () => {
    const ids = renderer.encode('Hi<|im_end|>');
    expect(ids.at(-1)).toBe(id('<|im_end|>'));
    expect(renderer.decode(ids)).toBe('Hi');
    expect(renderer.tokenText(id('<|im_end|>'))).toBe('<|im_end|>');
    expect(renderer.vocabularySize).toBe(tokenizer.vocabularySize);
  });

  it('turns a sampled tool-call reply back into calls, and the calls back into the same text', () => {
    const reply = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
    const sampled = [...renderer.encode(reply), id('<|im_end|>')];
    const decoder = renderer.createStreamDecoder();
    const parser = renderer.createOutputParser();
    const deltas: AssistantOutputDelta[] = [];
    for (const token of sampled) deltas.push(...parser.push(decoder.push(token)));
    deltas.push(...parser.push(decoder.finish()), ...parser.finish());
    expect(deltas).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_fixed', name: 'get_weather' },
      { type: 'tool-call-arguments', index: 0, text: '{"city":"Oslo"}' },
    ]);

    const history: ChatMessage[] = [{ role: 'user', content: 'Oslo?' }];
    const prompt = renderer.renderText(history, [weatherTool]);
    const replayed = renderer.renderText(
      [...history, { role: 'assistant', content: '', toolCalls: [{ id: 'call_fixed', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }],
      [weatherTool],
    );
    expect(replayed.startsWith(prompt + reply + '<|im_end|>\n')).toBe(true);
  });

  it('refuses a tokenizer with no end-of-turn token at all', () => {
    const bare = createTokenizer({
      tokenizerJson: { ...(readFixture('tokenizer.json') as object), added_tokens: [] },
      tokenizerConfig: parseTokenizerConfig({}),
    });
    expect(() => createChatRenderer({ tokenizer: bare, chatTemplate: chatmlTemplate })).toThrowError(ClawrlError);
    expect(createChatRenderer({ tokenizer: bare, chatTemplate: chatmlTemplate, stopTokenIds: [0] }).stopTokenIds).toEqual([0]);
  });
});

describe('loadChatRenderer', () => {
  it('builds the renderer of a model folder from its own template and generation config', async () => {
    const loaded = await loadChatRenderer(chatmlFolder);
    expect(loaded.renderText([{ role: 'user', content: 'Hi' }], [])).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect([...loaded.stopTokenIds].sort()).toEqual([id('<|im_end|>'), id('<|endoftext|>')].sort());
  });

  it('can override the template', async () => {
    const loaded = await loadChatRenderer(chatmlFolder, { chatTemplate: chatmlTemplate });
    expect(loaded.renderText([{ role: 'user', content: 'Hi' }], [])).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('renders Llama 3 with exactly one bos token and stops on its config eos ids', async () => {
    const loaded = await loadChatRenderer(llamaFolder);
    const ids = loaded.renderPrompt([{ role: 'user', content: 'Hello' }], []);
    const bos = loaded.encode('<|begin_of_text|>')[0];
    expect(ids.filter((token) => token === bos)).toHaveLength(1);
    expect(ids[0]).toBe(bos);
    const endOfTurn = loaded.encode('<|eot_id|>')[0];
    const endOfText = loaded.encode('<|end_of_text|>')[0];
    expect([...loaded.stopTokenIds].sort()).toEqual([endOfTurn, endOfText].sort());
  });
});
