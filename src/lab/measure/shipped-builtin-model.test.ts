import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../core/seeded-random.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { generateExample } from '../corpus/corpus-generator.js';
import { fitWithinWindow, fittedReplyRoom } from '../../model/fit-prompt.js';
import { agentClientNames, readAgentFirstRequest, withQuestion } from './agent-first-requests.js';
import { agentPromptQuestions } from './measure-agent-prompts.js';
import { isVerdictShaped } from './verdict-shaped-reply.js';

const folder = path.join(import.meta.dirname, '..', '..', '..', 'models', 'builtin-tiny');

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

describe('the shipped builtin:tiny model', () => {
  it('is a small Hugging Face Llama folder with the ChatML template', async () => {
    const weights = await stat(path.join(folder, 'model.safetensors'));
    expect(weights.size).toBeLessThanOrEqual(25 * 1024 * 1024);
    const config = JSON.parse(await readFile(path.join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ model_type: 'llama', tie_word_embeddings: true });
    const tokenizerConfig = JSON.parse(await readFile(path.join(folder, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    expect(tokenizerConfig).toMatchObject({ eos_token: '<|im_end|>', bos_token: null });
    expect(String(tokenizerConfig.chat_template)).toContain('<|im_start|>');
  });

  it('answers a held-out prompt with a reply that ends with <|im_end|>', async () => {
    const renderer = await loadChatRenderer(folder);
    const transformer = await loadTransformerFromFolder(folder);
    try {
      const example = generateExample(createSeededRandom(11), { split: 'heldout', task: 'solve', hintProbability: 0 });
      const prompt = renderer.renderPrompt(example.messages.slice(0, -1), []);
      const { sequences } = await transformer.sample({ promptTokenIds: prompt, maxTokens: 320, temperature: 0, stopTokenIds: [...renderer.stopTokenIds] });
      const reply = sequences[0];
      expect(reply?.finishReason).toBe('stop');
      expect(renderer.stopTokenIds).toContain(reply?.tokenIds.at(-1));
      expect(renderer.decode(reply?.tokenIds ?? []).trim().length).toBeGreaterThan(10);
    } finally {
      transformer.dispose();
    }
  });

  it("answers the question inside each agent CLI's fitted first request, not with a judge's verdict", async () => {
    const renderer = await loadChatRenderer(folder);
    const transformer = await loadTransformerFromFolder(folder);
    try {
      const [{ question } = { question: '' }] = agentPromptQuestions('shipped-test', 1);
      for (const client of agentClientNames) {
        const request = await readAgentFirstRequest(client);
        const { tokenIds } = fitWithinWindow(renderer, withQuestion(request, question), request.tools, 1024, fittedReplyRoom(1024));
        const { sequences } = await transformer.sample({ promptTokenIds: tokenIds, maxTokens: 320, temperature: 0, stopTokenIds: [...renderer.stopTokenIds] });
        const reply = renderer.decode(sequences[0]?.tokenIds ?? []);
        expect(isVerdictShaped(reply), `${client}: ${reply}`).toBe(false);
      }
    } finally {
      transformer.dispose();
    }
  });
});
