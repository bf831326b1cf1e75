/** Result files of an `eval personalize` and a `rollout` run, as those commands write them to `--out`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PersonalizeResult } from '../../src/lab/personalize/personalize-result.js';
import type { RolloutResult } from '../../src/rollouts/rollout-result.js';

const probe = (afterSession: number, satisfactionRate: number, policyVersion: number) => ({
  policyVersion,
  afterSession,
  satisfactionRate,
  satisfied: Math.round(satisfactionRate * 50),
  size: 50,
  mixedVersions: false,
});

export function writeExperimentResultFiles(folder: string): void {
  const personalize: PersonalizeResult = {
    user: 'student',
    method: 'combine',
    seed: 1,
    sessionsToSuccess: 6,
    consecutiveCriterion: 4,
    baseProbeRate: 0.22,
    successThreshold: 0.8,
    probeSize: 50,
    model: 'builtin:tiny',
    judge: { judge: 'policy', judgeModel: null },
    serverMethod: 'combine',
    sessions: Array.from({ length: 8 }, (_, index) => ({
      index: index + 1,
      firstResponseSatisfied: index >= 4,
      policyVersion: index,
      sessionId: `session-${index + 1}`,
      turnIds: [`turn-${index + 1}`],
      responsesSatisfied: index >= 4 ? 1 : 0,
    })),
    probe: [probe(0, 0.22, 0), probe(2, 0.36, 2), probe(4, 0.62, 4), probe(6, 0.84, 6), probe(8, 0.9, 8)],
  };
  mkdirSync(path.join(folder, 'personalize'), { recursive: true });
  writeFileSync(path.join(folder, 'personalize', 'personalize-student-combine-seed1.json'), JSON.stringify(personalize));
  mkdirSync(path.join(folder, 'rollout'), { recursive: true });
  const rollout: RolloutResult = {
    env: 'arithmetic',
    group: 4,
    tasksPerStep: 4,
    seed: 1,
    rewardMode: 'outcome',
    normalizeStd: false,
    model: 'builtin:tiny',
    evalSize: 50,
    evalEvery: 2,
    baseAccuracy: 0.25,
    finalAccuracy: 0.7,
    steps: Array.from({ length: 6 }, (_, index) => ({
      step: index + 1,
      reward: 0.2 + index * 0.1,
      accuracy: index % 2 === 1 ? 0.3 + index * 0.08 : null,
      processReward: null,
      groups: 4,
      zeroVarianceGroups: 0,
      turns: 16,
      trainedTurns: 16,
      train: 'trained',
      policyVersion: index + 1,
    })),
    serverArguments: null,
    startedAt: '2026-12-07T00:00:00.000Z',
    durationSeconds: 60,
  };
  writeFileSync(path.join(folder, 'rollout', 'rollout-arithmetic-seed1.json'), JSON.stringify(rollout));
}
