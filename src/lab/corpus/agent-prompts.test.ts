import { describe, expect, it } from 'vitest';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { agentShapedPrompt } from './agent-prompts.js';
import { generateCorpus, tutorSystemPrompts, type StyleExample } from './corpus-generator.js';

describe('agentShapedPrompt', () => {
  it('asks the question in a user message after system heads, the same way for the same seed', () => {
    for (let index = 0; index < 200; index += 1) {
      const question = `What is ${index} + 3?`;
      const messages = agentShapedPrompt(createSeededRandom(deriveSeed('agent', index)), question);
      expect(messages).toEqual(agentShapedPrompt(createSeededRandom(deriveSeed('agent', index)), question));
      const systems = messages.filter((message) => message.role === 'system');
      expect(messages[0]?.role).toBe('system');
      // What the fitting leaves of a system prompt: a head of a few hundred characters.
      expect(systems.reduce((sum, message) => sum + message.content.length, 0)).toBeLessThanOrEqual(1050);
      expect(messages.filter((message) => message.role === 'user' && message.content.includes(question))).toHaveLength(1);
    }
  });

  it('writes its own agent text, none of the captured CLIs\' (the measure on their requests stays held out)', () => {
    const text = Array.from({ length: 300 }, (_, index) => JSON.stringify(agentShapedPrompt(createSeededRandom(index), 'Q?'))).join('\n');
    for (const word of ['OpenClaw', 'OPENCLAW', 'Claude', 'Anthropic', 'Codex', 'OpenAI', 'system-reminder', 'environment_context', 'AGENTS.md']) {
      expect(text).not.toContain(word);
    }
  });
});

describe('generateCorpus with agentPromptShare', () => {
  it('leaves the corpus as it was at share 0, and wraps that share of tutoring examples otherwise', () => {
    const plain = generateCorpus({ seed: 3, count: 200, split: 'train' });
    expect(generateCorpus({ seed: 3, count: 200, split: 'train', agentPromptShare: 0 })).toEqual(plain);
    const wrapped = generateCorpus({ seed: 3, count: 400, split: 'train', agentPromptShare: 0.5 }).filter((example): example is StyleExample => example.task !== 'judge');
    const agentShaped = wrapped.filter((example) => example.messages.some((message) => message.role === 'system' && !tutorSystemPrompts.includes(message.content)));
    expect(agentShaped.length / wrapped.length).toBeGreaterThan(0.35);
    expect(agentShaped.length / wrapped.length).toBeLessThan(0.65);
    for (const example of agentShaped) {
      expect(example.messages.at(-1)?.role).toBe('assistant');
      expect(example.messages.some((message) => message.role === 'user' && message.content.includes(example.userMessage))).toBe(true);
    }
  });
});
