/** Records the store contracts and tests build on, each with overridable defaults. */
import { expect } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { JudgeVote, NewJudgement, NewPolicyVersion, NewSample, NewTurn, TrainingStepMetrics } from '../../spec/records.js';

/** A trainable main turn of session `s1`, served by version 0, unless `overrides` say otherwise. */
export function newTurn(id: string, overrides: Partial<NewTurn> = {}): NewTurn {
  return {
    id,
    sessionId: 's1',
    type: 'main',
    status: 'completed',
    trainable: true,
    tenant: null, user: null,
    model: 'builtin:tiny',
    policyVersion: 0,
    messages: [{ role: 'user', content: `question of ${id}` }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1, 2, 3],
    responseTokenIds: [4, 5],
    logprobs: [-0.5, -0.25],
    response: { role: 'assistant', content: 'answer' },
    finishReason: 'stop',
    timings: { startedAt: 1_000, firstTokenAt: 1_010, endedAt: 1_020 },
    error: null,
    replyKey: null,
    untrainableReason: null,
    supersededBy: null,
    ...overrides,
  };
}

export const verdict = (score: 1 | -1 | 0 | null, text = `\\boxed{${score ?? '?'}}`): JudgeVote => ({
  kind: 'verdict',
  text,
  score,
  hint: null,
  rejection: null,
});

export function judgement(turnId: string, overrides: Partial<NewJudgement> = {}): NewJudgement {
  return {
    turnId,
    judge: 'openai',
    judgeModel: 'judge-model',
    promptVersion: 'clawrl-prm-1',
    score: 1,
    votes: [verdict(1), verdict(1), verdict(-1), verdict(null, 'rambling')],
    hint: null,
    hintCandidates: [],
    hintSelection: null,
    latencyMs: 120,
    createdAt: 2_000,
    ...overrides,
  };
}

/** A ready `combine` sample of version 3 with a hint and teacher log-probs, unless `overrides` say otherwise. */
export function sample(id: string, turnId: string, overrides: Partial<NewSample> = {}): NewSample {
  return {
    id,
    turnId,
    method: 'combine',
    status: 'ready',
    dropReason: null,
    policyVersion: 3,
    judgementId: null,
    feedbackId: null,
    score: 1,
    hint: 'Keep it short and friendly.',
    group: null,
    lossMask: [1, 1],
    distillationGaps: [0.25, -1.5],
    teacherLogprobs: [-0.25, -0.75],
    support: [[{ id: 4, studentLogprob: -0.5, teacherLogprob: -0.25, gap: 0.25, weight: 0.75 }], [{ id: 9, studentLogprob: -1, teacherLogprob: null, gap: null, weight: 1 }]],
    createdAt: 3_000,
    ...overrides,
  };
}

/** The metrics of every step the contracts commit. */
export const trainingMetrics: TrainingStepMetrics = {
  loss: -0.5,
  policyGradientLoss: -0.5,
  clipFraction: 0,
  kl: null,
  importanceRatio: { mean: 1, min: 0.9, max: 1.1, truncatedFraction: 0 },
  rolloutLogprobAbsoluteDifference: 0.01,
  samplesUsed: 2,
  samplesDropped: 0,
  lossTokens: 4,
  gradientNorm: 0.3,
  learningRate: 1e-4,
  stepMs: 12,
};

const bytes = (...values: number[]) => Uint8Array.from(values);

/** Version `number`: the base for 0, else an adapter of two small files trained by step `number`. */
export function newPolicyVersion(number: number, overrides: Partial<NewPolicyVersion> = {}): NewPolicyVersion {
  return {
    version: number,
    parent: number === 0 ? null : number - 1,
    kind: number === 0 ? 'base' : 'adapter',
    files: number === 0 ? {} : { 'adapter_config.json': bytes(123, 125), 'adapter_model.safetensors': bytes(1, 2, 3, number) },
    step: number === 0 ? null : number,
    samples: number === 0 ? 0 : 2,
    metrics: number === 0 ? null : trainingMetrics,
    createdAt: 5_000 + number,
    ...overrides,
  };
}

/** Fails unless `promise` rejects with a `store_error`. */
export async function expectStoreError(promise: Promise<unknown>): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(ClawrlError.isInstance(error), `expected a ClawrlError, got ${String(error)}`).toBe(true);
  expect((error as ClawrlError).code).toBe('store_error');
}
