/**
 * The group rollout driver: each step draws `tasksPerStep` training tasks, runs `group` rollouts
 * of each through the server (at most `parallel` at a time), scores every turn with the
 * integrated reward (the verifier's outcome, plus the PRM's mean vote in `outcome+process` mode,
 * `core/rl/aggregate-votes.ts`), posts each turn's reward with its group and turn index to the
 * server as feedback, and has the server train one step on exactly those samples: the trainer
 * forms the GRPO advantages (`core/rl/reward-baseline.ts`, with the server recipe's
 * `groupNormalizeStd`). Every `evalEvery` steps (and before the first and after the last) it
 * measures accuracy on the environment's held-out split, with side turns the server never trains on.
 *
 * How the server learns of it (docs/environments.md, "How rollouts reach the trainer"):
 * - training is paused while a step's rollouts run, so no group is claimed before its every
 *   reward is in (the trainer claims the ready samples of a group whole);
 * - in `outcome+process` mode each episode's last turn gets the verifier's detail as feedback
 *   text, which the PRM reads as that turn's next state (tool-call turns already have the tool
 *   results as theirs); the driver waits until the PRM has judged every turn;
 * - each turn then gets feedback `{rollout: {group, turn_index, outcome_reward, process_reward,
 *   reward, ...}}`, which overrides the judge's reward for the sample and records where it came
 *   from; a group whose rewards all agree gets advantages of 0, which the trainer drops and counts;
 * - when the judging backlog is empty the driver resumes training and calls
 *   `POST /admin/training/step` until no ready sample is left.
 *
 * The driver counts what the trainer will find (groups without variance, turns with a signal) with
 * the same rule (`core/rl/group-advantages.ts`), for its report; it sends no advantage.
 */
import { deriveSamplingSeed } from '../core/seeded-random.js';
import { integratedReward, meanVote, type RewardMode } from '../core/rl/aggregate-votes.js';
import { groupAdvantages, processRewardsVary } from '../core/rl/group-advantages.js';
import type { EnvironmentDefinition } from '../spec/environment.js';
import type { RolloutClient } from './rollout-client.js';
import type { RolloutStep } from './rollout-result.js';
import { runEpisode, type EpisodeResult, type EpisodeSampling } from './run-episode.js';

export interface RolloutRunOptions {
  client: RolloutClient;
  definition: EnvironmentDefinition;
  group: number;
  tasksPerStep: number;
  parallel: number;
  steps: number;
  /** Measure held-out accuracy every k steps; 0 never (the base and the end are always measured). */
  evalEvery: number;
  /** Held-out tasks per accuracy measure. */
  evalSize: number;
  seed: number;
  rewardMode: RewardMode;
  runId: string;
  sampling?: EpisodeSampling;
  /**
   * Over `sampling` for the held-out episodes only. Why: greedy (temperature 0) measures what the
   * policy knows without the sampling noise, while the training rollouts still sample hot enough for
   * a group to disagree.
   */
  evalSampling?: EpisodeSampling;
  /** Longest wait for the PRM and the judging backlog per step (default 10 minutes). */
  maxWaitMs?: number;
  pollMs?: number;
  onProgress?: (line: string) => void;
}

export interface RolloutRunResult {
  model: string;
  baseAccuracy: number;
  finalAccuracy: number;
  steps: RolloutStep[];
}

/** Runs `work` over `items` with at most `limit` in flight, keeping the items' order in the result. */
export async function mapWithLimit<Item, Result>(items: readonly Item[], limit: number, work: (item: Item, index: number) => Promise<Result>): Promise<Result[]> {
  const results = new Array<Result>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as Item, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runRollout(options: RolloutRunOptions): Promise<RolloutRunResult> {
  const { client, definition } = options;
  const report = options.onProgress ?? (() => undefined);
  const model = await client.modelName();
  const maxWaitMs = options.maxWaitMs ?? 600_000;
  const pollMs = options.pollMs ?? 250;
  const evalTasks = definition.taskSource.tasks({ split: 'test', count: options.evalSize, seed: options.seed });

  async function accuracy(label: string): Promise<number> {
    const results = await mapWithLimit(evalTasks, options.parallel, (task, index) =>
      runEpisode({
        client: client.openai,
        model,
        definition,
        task,
        sessionId: `${options.runId}-eval-${label}-${index}`,
        turnType: 'side',
        sampling: { ...options.sampling, ...options.evalSampling, seed: deriveSamplingSeed(options.seed, 'eval', task.id) },
      }),
    );
    return results.filter((result) => result.verdict.correct).length / Math.max(1, results.length);
  }

  async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
    const started = Date.now();
    while (!(await condition())) {
      if (Date.now() - started > maxWaitMs) throw new Error(`timed out after ${maxWaitMs} ms waiting for ${what}`);
      await sleep(pollMs);
    }
  }

  const baseAccuracy = await accuracy('base');
  report(`base: held-out accuracy ${baseAccuracy.toFixed(3)} (${evalTasks.length} tasks)`);
  const steps: RolloutStep[] = [];
  for (let step = 1; step <= options.steps; step += 1) {
    const tasks = definition.taskSource.tasks({ split: 'train', count: options.tasksPerStep, seed: options.seed, offset: (step - 1) * options.tasksPerStep });
    await client.pauseTraining();
    const jobs = tasks.flatMap((task, taskIndex) => Array.from({ length: options.group }, (_, member) => ({ task, taskIndex, member })));
    const episodes = await mapWithLimit(jobs, options.parallel, ({ task, taskIndex, member }) =>
      runEpisode({
        client: client.openai,
        model,
        definition,
        task,
        sessionId: `${options.runId}-s${step}-t${taskIndex}-g${member}`,
        sampling: { ...options.sampling, seed: deriveSamplingSeed(options.seed, 'rollout', step, taskIndex, member) },
      }),
    );
    const scored = await scoreStep(step, episodes);
    const outcome = await train();
    const reward = episodes.reduce((sum, episode) => sum + episode.verdict.reward, 0) / Math.max(1, episodes.length);
    const measured = options.evalEvery > 0 && (step % options.evalEvery === 0 || step === options.steps) ? await accuracy(`s${step}`) : step === options.steps ? await accuracy(`s${step}`) : null;
    const progress = await client.progress();
    const entry: RolloutStep = {
      step,
      reward,
      accuracy: measured,
      processReward: scored.processReward,
      groups: tasks.length,
      zeroVarianceGroups: scored.zeroVarianceGroups,
      processVariedGroups: scored.processVariedGroups,
      turns: scored.turns,
      trainedTurns: scored.trainedTurns,
      train: outcome,
      policyVersion: progress.policyVersion,
    };
    steps.push(entry);
    report(
      `step ${step}/${options.steps}: reward ${reward.toFixed(3)}${measured === null ? '' : `, held-out accuracy ${measured.toFixed(3)}`}, ` +
        `${scored.zeroVarianceGroups}/${tasks.length} groups without variance, ` +
        (scored.processVariedGroups === null ? '' : `process rewards varied in ${scored.processVariedGroups}/${tasks.length} groups, `) +
        `${scored.trainedTurns}/${scored.turns} turns with an advantage, train ${outcome}, serving v${progress.policyVersion}`,
    );
  }
  const last = steps.at(-1);
  return { model, baseAccuracy, finalAccuracy: last?.accuracy ?? baseAccuracy, steps };

  async function scoreStep(
    step: number,
    episodes: EpisodeResult[],
  ): Promise<{ zeroVarianceGroups: number; processVariedGroups: number | null; turns: number; trainedTurns: number; processReward: number | null }> {
    const votes = await processVotes(episodes);
    const rewards = episodes.map((episode, index) => episode.turns.map((_, turn) => integratedReward(episode.verdict.reward, votes[index]?.[turn] ?? [], options.rewardMode)));
    let zeroVarianceGroups = 0;
    let processVariedGroups = 0;
    let trainedTurns = 0;
    const feedback: Promise<void>[] = [];
    for (let start = 0; start < episodes.length; start += options.group) {
      const members = episodes.slice(start, start + options.group);
      const result = groupAdvantages(rewards.slice(start, start + options.group));
      if (result.zeroVariance) zeroVarianceGroups += 1;
      if (processRewardsVary(votes.slice(start, start + options.group))) processVariedGroups += 1;
      members.forEach((episode, member) => {
        episode.turns.forEach((turn, index) => {
          if (turn.turnId === null) return;
          if ((result.advantages[member]?.[index] ?? null) !== null) trainedTurns += 1;
          const turnVotes = votes[start + member]?.[index] ?? [];
          feedback.push(
            client.sendFeedback({
              turnId: turn.turnId,
              rollout: {
                run_id: options.runId,
                environment: definition.name,
                step,
                group: `${options.runId}-s${step}-t${start / options.group}`,
                turn_index: index,
                outcome_reward: episode.verdict.reward,
                process_reward: meanVote(turnVotes),
                reward: rewards[start + member]?.[index] ?? 0,
              },
            }),
          );
        });
      });
    }
    await Promise.all(feedback);
    const allVotes = votes.flat().flatMap((turn) => meanVote(turn) ?? []);
    const turns = episodes.reduce((sum, episode) => sum + episode.turns.length, 0);
    return {
      zeroVarianceGroups,
      processVariedGroups: options.rewardMode === 'outcome' ? null : processVariedGroups,
      turns,
      trainedTurns,
      processReward: meanVote(allVotes),
    };
  }

  /** Per episode, per turn: the PRM's readable votes, or none in outcome mode. */
  async function processVotes(episodes: EpisodeResult[]): Promise<number[][][]> {
    if (options.rewardMode === 'outcome') return episodes.map((episode) => episode.turns.map(() => []));
    // The last turn's next state is the environment's verdict, which the PRM reads as feedback text.
    await Promise.all(
      episodes.flatMap((episode) => {
        const last = episode.turns.at(-1)?.turnId ?? null;
        return last === null ? [] : [client.sendFeedback({ turnId: last, text: `The environment checked the result: ${episode.verdict.correct ? 'solved' : 'not solved'} (${episode.verdict.detail}).` })];
      }),
    );
    return mapWithLimit(episodes, 4, async (episode) =>
      Promise.all(
        episode.turns.map(async (turn) => {
          if (turn.turnId === null) return [];
          const turnId = turn.turnId;
          let votes: number[] = [];
          await until(async () => {
            const judgement = await client.turnJudgement(turnId);
            votes = judgement.votes;
            return judgement.judged;
          }, `the PRM's judgement of turn ${turnId}`);
          return votes;
        }),
      ),
    );
  }

  async function train(): Promise<string> {
    await until(async () => (await client.progress()).judgingBacklog === 0, 'the judging backlog');
    const stepsBefore = (await client.progress()).trainSteps;
    await client.resumeTraining();
    let outcome = 'idle';
    for (let attempt = 0; attempt < 8; attempt += 1) {
      if ((await client.progress()).readySamples === 0) break;
      const next = await client.trainNow();
      // A step whose samples all had a zero advantage (or were stale) consumed them: go on to the rest.
      if (next === 'idle') break;
      outcome = next;
    }
    // Once resumed, the server's own trainer may claim the step's samples before the step asked
    // for here (steps run one at a time, so ours then finds none and answers idle): whether this
    // step trained is read from the server's step count, not from our request's answer.
    return (await client.progress()).trainSteps > stepsBefore ? 'trained' : outcome;
  }
}
