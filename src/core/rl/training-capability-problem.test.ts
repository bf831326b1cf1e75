import { describe, expect, it } from 'vitest';
import type { TrainingEngineCapabilities } from '../../spec/training-engine.js';
import { defaultPolicyLossOptions } from './policy-loss.js';
import { trainingCapabilityProblem, type TrainingPlan } from './training-capability-problem.js';

const everything: TrainingEngineCapabilities = { losses: ['decoupled_ppo', 'ppo', 'importance_sampling'], referenceLogprobs: true, anchor: true, supportSets: true, proximalLogprobs: true, anyTemperature: true };
const rolloutOnly: TrainingEngineCapabilities = { losses: ['ppo', 'importance_sampling'], referenceLogprobs: false, anchor: false, supportSets: false, proximalLogprobs: false, anyTemperature: true };
const plan = (overrides: Partial<TrainingPlan> = {}): TrainingPlan => ({ loss: 'decoupled_ppo', lossOptions: defaultPolicyLossOptions, trainEpochs: 1, supportTopK: 0, ...overrides });
const problemOf = (overrides: Partial<TrainingPlan>, capabilities: TrainingEngineCapabilities) => trainingCapabilityProblem(plan(overrides), { engineId: 'remote', capabilities });

describe('trainingCapabilityProblem', () => {
  it('lets an engine that computes everything run every combination of the decoupled loss', () => {
    const full = { loss: 'decoupled_ppo' as const, lossOptions: { ...defaultPolicyLossOptions, klCoefficient: 0.1, anchorCoefficient: 0.5 }, trainEpochs: 3, supportTopK: 4 };
    expect(problemOf(full, everything)).toBeNull();
    expect(problemOf({ loss: 'ppo' }, rolloutOnly)).toBeNull();
    expect(problemOf({ loss: 'importance_sampling' }, rolloutOnly)).toBeNull();
  });

  it('refuses a loss the engine does not compute, naming --loss', () => {
    expect(problemOf({}, rolloutOnly)).toEqual({ option: 'loss', message: 'The training engine remote cannot compute the loss decoupled_ppo (it computes ppo, importance_sampling): change --loss.' });
  });

  it('refuses each term the engine lacks, naming its option', () => {
    const decoupledOnly = { ...rolloutOnly, losses: ['decoupled_ppo'] as const };
    expect(problemOf({ lossOptions: { ...defaultPolicyLossOptions, klCoefficient: 0.1 } }, decoupledOnly)).toMatchObject({ option: 'klCoefficient', message: expect.stringMatching(/--kl-coefficient 0\.$/) });
    expect(problemOf({ lossOptions: { ...defaultPolicyLossOptions, anchorCoefficient: 0.5 } }, decoupledOnly)).toMatchObject({ option: 'anchorCoefficient' });
    expect(problemOf({ supportTopK: 4 }, decoupledOnly)).toMatchObject({ option: 'opdSupportK', message: expect.stringContaining('opdSupportK 4') });
    expect(problemOf({ trainEpochs: 2 }, decoupledOnly)).toMatchObject({ option: 'trainEpochs', message: expect.stringContaining('trainEpochs 2') });
  });

  it('refuses what a loss with the rollout as its old policy has no place for, even on an engine that computes everything', () => {
    for (const loss of ['ppo', 'importance_sampling'] as const) {
      expect(problemOf({ loss, supportTopK: 4 }, everything)).toMatchObject({ option: 'opdSupportK', message: expect.stringContaining('--loss decoupled_ppo') });
      expect(problemOf({ loss, trainEpochs: 2 }, everything)).toMatchObject({ option: 'trainEpochs' });
      expect(problemOf({ loss, lossOptions: { ...defaultPolicyLossOptions, klCoefficient: 0.1 } }, everything)).toMatchObject({ option: 'klCoefficient' });
      expect(problemOf({ loss, lossOptions: { ...defaultPolicyLossOptions, anchorCoefficient: 0.5 } }, everything)).toMatchObject({ option: 'anchorCoefficient' });
    }
  });

  it('says it in one line', () => {
    const message = problemOf({ loss: 'ppo', trainEpochs: 2 }, everything)?.message ?? '';
    expect(message).not.toContain('\n');
  });
});
