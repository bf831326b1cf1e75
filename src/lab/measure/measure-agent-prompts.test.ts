import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPretrainTinyCommand } from '../../cli/commands/pretrain-tiny-command.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { agentPromptQuestions, defaultAgentPromptsOptions, formatAgentPromptsMeasurement, measureAgentPrompts } from './measure-agent-prompts.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'lab', 'pretrain', 'pretrain-worker.js'), import.meta.url);
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'clawrl-agent-prompts-'));
  await initializeTensorBackend({ backend: 'wasm' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('agentPromptQuestions', () => {
  it('gives different held-out questions with their answers, the same for the same seed', () => {
    const questions = agentPromptQuestions('agent-prompts', 20);
    expect(new Set(questions.map((entry) => entry.question)).size).toBe(20);
    expect(agentPromptQuestions('agent-prompts', 20)).toEqual(questions);
    for (const { answer } of questions) expect(Number.isFinite(answer)).toBe(true);
  });
});

describe('measureAgentPrompts', () => {
  it('counts every reply of every client and of the plain prompts', async () => {
    const out = path.join(root, 'model');
    await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 4, workerUrl, log: () => undefined });
    const result = await measureAgentPrompts({ ...defaultAgentPromptsOptions, modelDirectory: out, questions: 2, samplesPerQuestion: 2, maxTokens: 8 });
    for (const kind of [result.plain, ...Object.values(result.clients)]) {
      expect(kind.answers.count).toBe(4);
      expect(kind.right.count).toBe(4);
      expect(kind.examples.length).toBeGreaterThan(0);
    }
    expect(Object.keys(result.clients).sort()).toEqual(['claude-code', 'codex', 'openclaw']);
    expect(result.clients.openclaw?.promptTokens.whole).toBeGreaterThan(result.clients.openclaw?.promptTokens.fitted ?? 0);
    expect(formatAgentPromptsMeasurement(result)).toMatch(/^model .*\nplain +answers/);
  });
});
