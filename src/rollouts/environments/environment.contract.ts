/**
 * The contract every environment runs (`describeEnvironmentContract(...)` in its test): tasks are
 * JSON, deterministic and split without overlap; an environment is single-use, gives its initial
 * observation once, answers actions until done within `maxTurns`, and when done carries the
 * outcome and the verdict; `verify` is pure and agrees with that verdict, also on the outcome
 * after a JSON round trip (as a manager re-checks a worker's result from the bus); `close` may be
 * called twice.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../spec/chat.js';
import type { EnvironmentDefinition, EnvironmentStepResult, EnvironmentTask } from '../../spec/environment.js';

/** Picks the next action from the conversation so far (initial messages, actions, observations). */
export type ScriptedPolicy = (task: EnvironmentTask, conversation: readonly ChatMessage[]) => ChatMessage;

export interface EnvironmentContractOptions {
  definition: EnvironmentDefinition;
  /** Solves the task (reward > 0, correct). */
  solve: ScriptedPolicy;
  /** Fails it (reward 0, not correct). */
  fail: ScriptedPolicy;
  /** Tasks drawn per split for the split checks (default 40). */
  splitSize?: number;
}

async function playEpisode(definition: EnvironmentDefinition, task: EnvironmentTask, policy: ScriptedPolicy): Promise<{ last: EnvironmentStepResult; turns: number }> {
  const environment = await definition.create(task);
  try {
    const first = await environment.initialObservation();
    const conversation: ChatMessage[] = [...first.messages];
    for (let turns = 1; turns <= definition.maxTurns; turns += 1) {
      const action = policy(task, conversation);
      conversation.push(action);
      const result = await environment.step(action);
      if (result.done) return { last: result, turns };
      expect(result.observation.length).toBeGreaterThan(0);
      conversation.push(...result.observation);
    }
    throw new Error(`${definition.name} was not done after maxTurns = ${definition.maxTurns} actions`);
  } finally {
    await environment.close();
  }
}

export function describeEnvironmentContract(options: EnvironmentContractOptions): void {
  const { definition } = options;
  const size = options.splitSize ?? 40;
  const draw = (split: 'train' | 'test', offset = 0, seed = 1) => definition.taskSource.tasks({ split, count: size, seed, offset });

  describe(`environment contract: ${definition.name}`, () => {
    it('names itself in kebab-case and bounds its episodes', () => {
      expect(definition.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(definition.maxTurns).toBeGreaterThanOrEqual(1);
      expect(definition.description.length).toBeGreaterThan(0);
    });

    it('yields JSON tasks, deterministically, with unique ids of the split asked for', () => {
      const train = draw('train');
      expect(train).toHaveLength(size);
      expect(JSON.parse(JSON.stringify(train))).toEqual(train);
      expect(draw('train')).toEqual(train);
      expect(new Set(train.map((task) => task.id)).size).toBe(size);
      expect(train.every((task) => task.split === 'train')).toBe(true);
      expect(draw('test').every((task) => task.split === 'test')).toBe(true);
      // Another window of the split is other tasks.
      const later = new Set(draw('train', size).map((task) => task.id));
      expect(train.some((task) => later.has(task.id))).toBe(false);
    });

    it('keeps the test split apart from the train split', () => {
      const trainData = new Set([...draw('train'), ...draw('train', 0, 2)].map((task) => JSON.stringify(task.data)));
      const test = [...draw('test'), ...draw('test', 0, 2)];
      expect(test.filter((task) => trainData.has(JSON.stringify(task.data)))).toEqual([]);
      const trainIds = new Set(draw('train').map((task) => task.id));
      expect(draw('test').filter((task) => trainIds.has(task.id))).toEqual([]);
    });

    it('is single-use: one initial observation, taken before any action', async () => {
      const [task] = draw('train');
      const environment = await definition.create(task as EnvironmentTask);
      try {
        await expect(environment.step({ role: 'assistant', content: 'too early' })).rejects.toThrow();
        const first = await environment.initialObservation();
        expect(first.messages.length).toBeGreaterThan(0);
        expect(first.messages.at(-1)?.role).toBe('user');
        await expect(environment.initialObservation()).rejects.toThrow();
      } finally {
        await environment.close();
      }
    });

    it('solves a task within maxTurns; done carries the outcome and a verdict that verify repeats', async () => {
      for (const task of draw('test').slice(0, 3)) {
        const { last } = await playEpisode(definition, task, options.solve);
        expect(last.done).toBe(true);
        expect(last.observation).toEqual([]);
        expect(last.outcome).toBeDefined();
        expect(last.verdict).toMatchObject({ correct: true });
        expect(last.verdict?.reward).toBeGreaterThan(0);
        const outcome = last.outcome ?? {};
        expect(definition.verify(task, outcome)).toEqual(last.verdict);
        expect(definition.verify(task, outcome)).toEqual(definition.verify(task, outcome));
        expect(definition.verify(JSON.parse(JSON.stringify(task)), JSON.parse(JSON.stringify(outcome)))).toEqual(last.verdict);
      }
    });

    it('gives a failed attempt reward 0 and says so', async () => {
      const [task] = draw('test');
      const { last } = await playEpisode(definition, task as EnvironmentTask, options.fail);
      expect(last.verdict).toMatchObject({ correct: false, reward: 0 });
      expect(definition.verify(task as EnvironmentTask, last.outcome ?? {})).toEqual(last.verdict);
      expect(last.verdict?.detail.length).toBeGreaterThan(0);
    });

    it('refuses an action after done, and closes twice without error', async () => {
      const [task] = draw('train');
      const environment = await definition.create(task as EnvironmentTask);
      const first = await environment.initialObservation();
      const conversation: ChatMessage[] = [...first.messages];
      let result: EnvironmentStepResult = { observation: [], done: false };
      for (let turn = 0; turn < definition.maxTurns && !result.done; turn += 1) {
        const action = options.solve(task as EnvironmentTask, conversation);
        conversation.push(action);
        result = await environment.step(action);
        conversation.push(...result.observation);
      }
      expect(result.done).toBe(true);
      await expect(environment.step({ role: 'assistant', content: 'again' })).rejects.toThrow();
      await environment.close();
      await environment.close();
    });
  });
}
