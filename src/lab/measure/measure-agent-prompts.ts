/**
 * The built-in model on agents' prompts (issue 56): each real CLI's captured first request
 * (`agent-first-requests.ts`) with held-out arithmetic questions asked in place of its own, fitted
 * to the window as the gateway fits it (`--prompt-overflow fit`: the tools go, the system prompt
 * keeps its head), against the same questions asked plainly. Per client: the share of replies
 * that are answers (not verdict-shaped, `verdict-shaped-reply.ts`) and how many state the right
 * number. The goal: at least 95% answers per client, and at least as many right as plainly.
 */
import { createSeededRandom, deriveSamplingSeed, deriveSeed } from '../../core/seeded-random.js';
import { fitWithinWindow, fittedReplyRoom } from '../../model/fit-prompt.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder } from '../../model/transformer.js';
import { buildTutorTask } from '../corpus/tutor-tasks.js';
import { agentClientNames, readAgentFirstRequest, withQuestion, type AgentClientName } from './agent-first-requests.js';
import { statedAnswer } from './measure-builtin-model.js';
import { sampleRepliesToPrompt } from './sample-replies.js';
import { counter, rateOf, tally, type Rate } from './tally.js';
import { verdictSigns, type VerdictSign } from './verdict-shaped-reply.js';

export interface MeasureAgentPromptsOptions {
  modelDirectory: string;
  /** Held-out arithmetic questions (default 20). */
  questions: number;
  /** Replies sampled per question and prompt. */
  samplesPerQuestion: number;
  temperature: number;
  maxTokens: number;
  seed: string;
  clients?: readonly AgentClientName[];
  log?: (line: string) => void;
}

export const defaultAgentPromptsOptions: Omit<MeasureAgentPromptsOptions, 'modelDirectory'> = {
  questions: 20,
  samplesPerQuestion: 1,
  temperature: 1,
  maxTokens: 320,
  seed: 'agent-prompts',
};

export interface PromptKindMeasurement {
  /** Replies that are answers, not verdicts. */
  answers: Rate;
  /** Replies whose stated answer is the question's. */
  right: Rate;
  rightCount: number;
  verdictSigns: Partial<Record<VerdictSign, number>>;
  /** Prompt tokens after fitting (the first question's), and before. */
  promptTokens: { fitted: number; whole: number };
  /** The first replies, to read what went wrong. */
  examples: { question: string; reply: string; verdictShaped: boolean }[];
}

export interface AgentPromptsMeasurement {
  modelDirectory: string;
  settings: Omit<MeasureAgentPromptsOptions, 'modelDirectory' | 'log' | 'clients'>;
  plain: PromptKindMeasurement;
  clients: Partial<Record<AgentClientName, PromptKindMeasurement & { capturedWith: string }>>;
  goal: { answersAtLeast95: boolean; atLeastAsManyRightAsPlain: boolean };
}

/** The held-out questions: the corpus's `solve` messages on the held-out names, with their answers. */
export function agentPromptQuestions(seed: string, count: number): { question: string; answer: number }[] {
  return Array.from({ length: count }, (_, index) => {
    const task = buildTutorTask('solve', createSeededRandom(deriveSeed(seed, 'question', index)), 'heldout');
    return { question: task.userMessage, answer: task.problem.answer };
  });
}

const exampleCount = 3;

export async function measureAgentPrompts(options: MeasureAgentPromptsOptions): Promise<AgentPromptsMeasurement> {
  const log = options.log ?? (() => undefined);
  const renderer = await loadChatRenderer(options.modelDirectory);
  const transformer = await loadTransformerFromFolder(options.modelDirectory);
  const contextLength = transformer.shape.maxPositionEmbeddings;
  const questions = agentPromptQuestions(options.seed, options.questions);
  try {
    const measureKind = async (label: string, promptOf: (question: string) => { tokenIds: number[]; wholeTokens: number }): Promise<PromptKindMeasurement> => {
      const answers = counter();
      const right = counter();
      const signs: Partial<Record<VerdictSign, number>> = {};
      const examples: PromptKindMeasurement['examples'] = [];
      let promptTokens = { fitted: 0, whole: 0 };
      for (const [index, { question, answer }] of questions.entries()) {
        const prompt = promptOf(question);
        if (index === 0) promptTokens = { fitted: prompt.tokenIds.length, whole: prompt.wholeTokens };
        const seed = deriveSamplingSeed(options.seed, label, index);
        const { replies } = await sampleRepliesToPrompt(transformer, renderer, prompt.tokenIds, options.samplesPerQuestion, options.temperature, options.maxTokens, seed);
        for (const reply of replies) {
          const found = verdictSigns(reply.text);
          for (const sign of found) signs[sign] = (signs[sign] ?? 0) + 1;
          tally(answers, found.length === 0);
          tally(right, statedAnswer(reply.text) === answer);
          if (examples.length < exampleCount) examples.push({ question, reply: reply.text, verdictShaped: found.length > 0 });
        }
      }
      log(`${label}: ${answers.hits}/${answers.count} answers, ${right.hits}/${right.count} right`);
      return { answers: rateOf(answers), right: rateOf(right), rightCount: right.hits, verdictSigns: signs, promptTokens, examples };
    };

    const plain = await measureKind('plain', (question) => {
      const tokenIds = renderer.renderPrompt([{ role: 'user', content: question }], []);
      return { tokenIds, wholeTokens: tokenIds.length };
    });
    const clients: AgentPromptsMeasurement['clients'] = {};
    for (const client of options.clients ?? agentClientNames) {
      const request = await readAgentFirstRequest(client);
      const measured = await measureKind(client, (question) =>
        fitWithinWindow(renderer, withQuestion(request, question), request.tools, contextLength, fittedReplyRoom(contextLength)),
      );
      clients[client] = { ...measured, capturedWith: request.capturedWith };
    }
    const measuredClients = Object.values(clients);
    const { log: _log, clients: _clients, modelDirectory, ...settings } = options;
    return {
      modelDirectory,
      settings,
      plain,
      clients,
      goal: {
        answersAtLeast95: measuredClients.every((client) => client.answers.rate >= 0.95),
        atLeastAsManyRightAsPlain: measuredClients.every((client) => client.rightCount >= plain.rightCount),
      },
    };
  } finally {
    transformer.dispose();
  }
}

const percent = (rate: Rate): string => `${(rate.rate * 100).toFixed(0)}% of ${rate.count}`;

export function formatAgentPromptsMeasurement(result: AgentPromptsMeasurement): string {
  const row = (name: string, kind: PromptKindMeasurement): string =>
    `${name.padEnd(12)} answers ${percent(kind.answers).padEnd(10)} right ${String(kind.rightCount).padStart(3)}/${kind.right.count}  prompt ${kind.promptTokens.fitted} tokens (of ${kind.promptTokens.whole})`;
  const lines = [`model ${result.modelDirectory}`, row('plain', result.plain)];
  for (const [name, kind] of Object.entries(result.clients)) {
    lines.push(row(name, kind));
    for (const example of kind.examples.filter((entry) => entry.verdictShaped).slice(0, 1)) lines.push(`  verdict-shaped: ${JSON.stringify(example.reply.slice(0, 160))}`);
  }
  lines.push(`goal: answers >= 95% per client ${result.goal.answersAtLeast95 ? 'met' : 'NOT met'}; at least as many right as plain ${result.goal.atLeastAsManyRightAsPlain ? 'met' : 'NOT met'}`);
  return lines.join('\n');
}
