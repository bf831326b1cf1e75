/**
 * `tool-calc`: a word problem with a `calculate` tool the model may call, executed for real
 * (`calculate-expression.ts`, no eval), before it answers. Each tool call is answered with its
 * result as a `tool` message, which is also the next state the server's PRM judges that turn by;
 * the first reply without a tool call is the final answer, checked like `arithmetic` (reward 1 or
 * 0). A rollout that is still calling tools at `maxTurns` ends there with the answer its last
 * reply gives, usually none.
 */
import type { ChatMessage, ToolCall, ToolDefinition } from '../../spec/chat.js';
import type { EnvironmentDefinition } from '../../spec/environment.js';
import { verifyNumericAnswer, wordProblemPrompt } from './arithmetic-environment.js';
import { calculateExpression } from '../../core/calculate-expression.js';
import { finalNumericAnswer } from './final-answer.js';
import { stringToolArgument } from './string-tool-argument.js';
import { createSingleUseGuard } from './single-use-guard.js';
import { createWordProblemTaskSource, wordProblemOf } from './word-problem-tasks.js';

export const calculateTool: ToolDefinition = {
  name: 'calculate',
  description: 'Evaluates an arithmetic expression with + - * / % and parentheses, e.g. "12 + 7 * 3".',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'the arithmetic expression' } },
    required: ['expression'],
  },
};

/** The tool's answer to one call, as the text of its `tool` message. */
export function runCalculateCall(call: ToolCall): string {
  if (call.name !== calculateTool.name) return `error: unknown tool '${call.name}'; the only tool is calculate`;
  const expression = stringToolArgument(call, 'expression');
  if (!expression.ok) return expression.error;
  const result = calculateExpression(expression.value);
  return result.ok ? String(result.value) : `error: ${result.error}`;
}

const maxTurns = 4;

export const toolCalcEnvironment: EnvironmentDefinition = {
  name: 'tool-calc',
  description: 'word problems with a real calculate tool; the final answer is checked, reward 1 or 0',
  maxTurns,
  taskSource: createWordProblemTaskSource('tool-calc'),
  async create(task) {
    const { question } = wordProblemOf(task);
    const guard = createSingleUseGuard('tool-calc');
    let actions = 0;
    let toolCalls = 0;
    return {
      async initialObservation() {
        guard.observe();
        const instruction = 'You may call the calculate tool for any arithmetic, then state the final answer.';
        return { messages: [{ role: 'user', content: `${wordProblemPrompt(question)}\n${instruction}` }], tools: [calculateTool] };
      },
      async step(action) {
        guard.act();
        actions += 1;
        const calls = action.toolCalls ?? [];
        if (calls.length > 0 && actions < maxTurns) {
          toolCalls += calls.length;
          const observation: ChatMessage[] = calls.map((call) => ({ role: 'tool', toolCallId: call.id, name: call.name, content: runCalculateCall(call) }));
          return { observation, done: false };
        }
        guard.finish();
        const outcome = { answer: finalNumericAnswer(action.content), toolCalls };
        return { observation: [], done: true, outcome, verdict: toolCalcEnvironment.verify(task, outcome) };
      },
      async close() {},
    };
  },
  verify(task, outcome) {
    return verifyNumericAnswer(task, outcome.answer);
  },
};
