import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../spec/chat.js';
import { describeEnvironmentContract } from './environment.contract.js';
import { runCalculateCall, toolCalcEnvironment } from './tool-calc-environment.js';
import { wordProblemOf } from './word-problem-tasks.js';

/** Calls the tool once with the answer's own expression, then answers with the tool's result. */
function solveWithTool(conversation: readonly ChatMessage[], answer: number): ChatMessage {
  const result = conversation.findLast((message) => message.role === 'tool');
  if (result === undefined) {
    return { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'calculate', arguments: JSON.stringify({ expression: `${answer} + 0` }) }] };
  }
  return { role: 'assistant', content: `The answer is ${result.content}.` };
}

describeEnvironmentContract({
  definition: toolCalcEnvironment,
  solve: (task, conversation) => solveWithTool(conversation, wordProblemOf(task).answer),
  fail: () => ({ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'calculate', arguments: '{"expression": "1 +"}' }] }),
});

describe('tool-calc', () => {
  it('answers a tool call with its real result, and errors as text', () => {
    expect(runCalculateCall({ id: 'a', name: 'calculate', arguments: '{"expression":"40 - 3 * 4"}' })).toBe('28');
    expect(runCalculateCall({ id: 'a', name: 'calculate', arguments: 'not json' })).toMatch(/^error: /);
    expect(runCalculateCall({ id: 'a', name: 'shell', arguments: '{}' })).toMatch(/unknown tool/);
  });

  it('offers the calculate tool and counts the calls in the outcome', async () => {
    const [task] = toolCalcEnvironment.taskSource.tasks({ split: 'train', count: 1 });
    if (task === undefined) throw new Error('no task');
    const environment = await toolCalcEnvironment.create(task);
    const first = await environment.initialObservation();
    expect(first.tools.map((tool) => tool.name)).toEqual(['calculate']);
    const conversation: ChatMessage[] = [...first.messages];
    const call = solveWithTool(conversation, wordProblemOf(task).answer);
    const middle = await environment.step(call);
    expect(middle).toMatchObject({ done: false, observation: [{ role: 'tool', toolCallId: 'call_0', content: String(wordProblemOf(task).answer) }] });
    const end = await environment.step(solveWithTool([...conversation, call, ...middle.observation], 0));
    expect(end.outcome).toEqual({ answer: wordProblemOf(task).answer, toolCalls: 1 });
    await environment.close();
  });
});
