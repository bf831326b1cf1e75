/**
 * The example module environment docs/results.md's control run uses (`docs/examples/self-check-environment.mjs`):
 * loaded as `clawrl rollout --env <module>` loads it, and held to the contract every environment runs.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeEnvironmentContract } from './environment.contract.js';
import { loadEnvironment } from './environment-registry.js';

const repository = fileURLToPath(new URL('../../..', import.meta.url));
const definition = await loadEnvironment('docs/examples/self-check-environment.mjs', repository);

describeEnvironmentContract({
  definition,
  solve: () => ({ role: 'assistant', content: 'Adding gives 12 + 5 = 17. To check, 17 - 5 = 12.' }),
  fail: () => ({ role: 'assistant', content: 'Adding gives 12 + 5 = 17.' }),
});

describe('the self-check example environment', () => {
  it("asks arithmetic's questions and rewards the check, not the answer", async () => {
    const [task] = definition.taskSource.tasks({ split: 'test', count: 1 });
    if (task === undefined) throw new Error('no task');
    const environment = await definition.create(task);
    const first = await environment.initialObservation();
    expect(first.messages[0]?.content).toMatch(/^Solve this word problem\. /);
    const result = await environment.step({ role: 'assistant', content: 'The answer is 1. Check: 1 = 1.' });
    expect(result).toMatchObject({ done: true, verdict: { reward: 1, correct: true } });
    await environment.close();
  });
});
