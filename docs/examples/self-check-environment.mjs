// A control for the RL loop (docs/results.md, "Environments"): the `arithmetic` environment's word problems,
// rewarded for a reply that checks its result ("To check, 17 - 5 = 12"), whatever its answer. The built-in
// model writes such a check in some replies and not in others, so a group disagrees and the policy can learn
// to write one every time; run from a checkout after `npm run build`:
//   npx clawrl rollout --env docs/examples/self-check-environment.mjs --train-params lora --learning-rate 2e-3
import { arithmeticEnvironment } from '../../dist/rollouts/environments/arithmetic-environment.js';

const verdictOf = (text) => {
  const checked = typeof text === 'string' && /\bcheck/i.test(text);
  return { reward: checked ? 1 : 0, correct: checked, detail: checked ? 'the reply checks its result' : 'the reply has no check' };
};

export default {
  name: 'self-check',
  description: "arithmetic's word problems; reward 1 when the reply checks its result",
  maxTurns: 1,
  taskSource: arithmeticEnvironment.taskSource,
  async create(task) {
    // The arithmetic episode keeps the rules of a single-use environment (one observation, then one action).
    const problem = await arithmeticEnvironment.create(task);
    return {
      initialObservation: () => problem.initialObservation(),
      async step(action) {
        await problem.step(action);
        const outcome = { text: action.content };
        return { observation: [], done: true, outcome, verdict: verdictOf(outcome.text) };
      },
      close: () => problem.close(),
    };
  },
  verify: (task, outcome) => verdictOf(outcome.text),
};
