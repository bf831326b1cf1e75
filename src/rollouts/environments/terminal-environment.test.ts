import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '../../spec/chat.js';
import type { EnvironmentTask } from '../../spec/environment.js';
import { describeEnvironmentContract } from './environment.contract.js';
import { terminalEnvironment } from './terminal-environment.js';
import { terminalTaskOf } from './terminal-tasks.js';

const call = (command: string, id = 'call_0'): ToolCall => ({ id, name: 'run', arguments: JSON.stringify({ command }) });

/** Runs the commands a person would, then answers from what the tool returned. */
function solve(task: EnvironmentTask, conversation: readonly ChatMessage[]): ChatMessage {
  const data = terminalTaskOf(task);
  const results = conversation.filter((message) => message.role === 'tool');
  if (results.length === 0) {
    if (data.kind === 'create') {
      const target = data.target ?? { path: '', text: '' };
      const folder = path.dirname(target.path);
      const commands = [...(folder === '.' ? [] : [`mkdir -p ${folder}`]), `echo ${target.text} > ${target.path}`];
      return { role: 'assistant', content: '', toolCalls: commands.map((command, index) => call(command, `call_${index}`)) };
    }
    if (data.kind === 'count') return { role: 'assistant', content: '', toolCalls: [call(`find . -name '*.${data.extension}' | wc -l`)] };
    return { role: 'assistant', content: '', toolCalls: [call(`grep -rl ${data.word} .`)] };
  }
  if (data.kind === 'create') return { role: 'assistant', content: 'done' };
  const output = (results.at(-1)?.content ?? '').split('\n')[0]?.trim() ?? '';
  return { role: 'assistant', content: `The answer is ${output}` };
}

describeEnvironmentContract({
  definition: terminalEnvironment,
  solve,
  fail: () => ({ role: 'assistant', content: 'I cannot tell.' }),
});

describe('terminal', () => {
  const tasks = terminalEnvironment.taskSource.tasks({ split: 'train', count: 3 });

  it('draws every kind of task', () => {
    expect(tasks.map((task) => terminalTaskOf(task).kind)).toEqual(['create', 'count', 'find']);
  });

  it('answers a refused command as the tool result and removes its directory on close', async () => {
    const task = tasks[1] as EnvironmentTask;
    const environment = await terminalEnvironment.create(task);
    await environment.initialObservation();
    const step = await environment.step({ role: 'assistant', content: '', toolCalls: [call('curl http://example.com'), call('cat /etc/passwd', 'call_1')] });
    expect(step.done).toBe(false);
    expect(step.observation.map((message) => message.content)).toEqual([expect.stringMatching(/^refused: 'curl' is not allowed/), expect.stringMatching(/^refused: .*outside the sandbox/)]);
    const listing = await environment.step({ role: 'assistant', content: '', toolCalls: [call('pwd')] });
    const directory = (listing.observation[0]?.content ?? '').split('\n')[0] ?? '';
    expect(existsSync(directory)).toBe(true);
    await environment.close();
    expect(existsSync(directory)).toBe(false);
  });

  it('checks the final state: a count is wrong once the counted files were changed', () => {
    const task = tasks[1] as EnvironmentTask;
    const data = terminalTaskOf(task);
    const files = data.files.filter((file) => !file.path.endsWith(`.${data.extension}`));
    expect(terminalEnvironment.verify(task, { answer: data.expected ?? '', files: data.files })).toMatchObject({ correct: true });
    if (files.length !== data.files.length) expect(terminalEnvironment.verify(task, { answer: data.expected ?? '', files })).toMatchObject({ correct: false });
    expect(terminalEnvironment.verify(task, { answer: '1' })).toMatchObject({ correct: false, detail: 'no final directory state' });
  });
});
