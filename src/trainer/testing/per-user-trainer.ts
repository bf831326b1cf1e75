/**
 * A trainer with `policyScope: 'user'` over an in-memory store, for the per-user tests: samples of
 * users recorded as the gateway and judge would, and training engines whose lineages record what
 * the trainer asks of them (whether a lineage was moved, and the optimizer's step count).
 */
import { createFakeTrainingEngine } from '../../engines/testing/fake-training-engine.js';
import { withTrainingLineages } from '../../engines/training-lineages.js';
import { createScriptedInferenceEngine } from '../../gateway/testing/scripted-inference-engine.js';
import { createPolicyServing } from '../../serving/policy-serving.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { ForwardBackwardInput, ForwardBackwardOutput, TrainingEngine } from '../../spec/training-engine.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { createTrainer, type TrainerOptions } from '../create-trainer.js';

export const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** `count` completed turns of `user`'s session, each with a ready RL sample sampled by `policyVersion`. */
export async function recordSamplesOf(store: RecordStore, user: string | null, count: number, policyVersion = 0): Promise<void> {
  const sessionId = `session-${user ?? 'none'}-${policyVersion}`;
  await store.upsertSession({ id: sessionId, tenant: user?.split('/')[0] ?? null, user, at: 1 });
  for (let index = 0; index < count; index += 1) {
    const id = `${sessionId}-turn-${index}`;
    await store.recordTurn({
      id, sessionId, type: 'main', status: 'completed', trainable: true, tenant: user?.split('/')[0] ?? null, user, model: 'tiny', policyVersion,
      messages: [{ role: 'user', content: `q${index}` }], tools: [], sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
      promptTokenIds: [3, 14, 15, 92 + index], responseTokenIds: [65, 35], logprobs: [-4, -4.5], response: { role: 'assistant', content: 'a' },
      finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: null,
    });
    await store.recordSample({
      id: `sample-${id}`, turnId: id, method: 'rl', status: 'ready', dropReason: null, policyVersion, judgementId: null, feedbackId: null,
      score: index % 2 === 0 ? 1 : -1, group: null, hint: null, lossMask: [1, 1], distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 10 + index,
    });
  }
}

/** What the trainer asked of one lineage of the engine. */
export type LineageCall =
  | { lineage: string; call: 'forwardBackward'; input: ForwardBackwardInput; output: ForwardBackwardOutput }
  | { lineage: string; call: 'optimizerStep'; step: number }
  | { lineage: string; call: 'loadState'; reference: string }
  | { lineage: string; call: 'resetWeights'; version: number };

/** `engine` whose lineages record their calls in `calls`. */
export function recordingLineages(engine: TrainingEngine): { engine: TrainingEngine; calls: LineageCall[] } {
  const lineageOf = engine.lineage?.bind(engine);
  if (lineageOf === undefined) throw new Error(`the engine '${engine.engineId}' has no lineages`);
  const calls: LineageCall[] = [];
  const recorded: TrainingEngine = {
    ...engine,
    lineage(lineage) {
      const inner = lineageOf(lineage);
      return {
        ...inner,
        async forwardBackward(input) {
          const output = await inner.forwardBackward(input);
          calls.push({ lineage, call: 'forwardBackward', input, output });
          return output;
        },
        async optimizerStep(input) {
          const output = await inner.optimizerStep(input);
          calls.push({ lineage, call: 'optimizerStep', step: output.step });
          return output;
        },
        async loadState(reference) {
          calls.push({ lineage, call: 'loadState', reference });
          await inner.loadState(reference);
        },
        async resetWeights(artifact) {
          calls.push({ lineage, call: 'resetWeights', version: artifact.version });
          await inner.resetWeights(artifact);
        },
      };
    },
  };
  return { engine: recorded, calls };
}

/** A started per-user trainer; by default on fake engines over one client, as the local engine's lineages are. */
export async function perUserTrainer(overrides: Partial<TrainerOptions> = {}) {
  const store = createSqliteRecordStore({ path: ':memory:' });
  const trainingEngine = overrides.trainingEngine ?? withTrainingLineages({ first: createFakeTrainingEngine(), capacity: 1 });
  const serving = createPolicyServing({ store, engine: createScriptedInferenceEngine({}), logger: silent, now: () => 1_000 });
  await serving.start();
  let changes = 0;
  let now = 2_000;
  const trainer = createTrainer({
    store, serving, logger: silent, now: () => now, workerId: 'trainer', trainEvery: 4, pollIntervalMs: 60_000,
    policyScope: 'user', onUserLineageChange: () => void (changes += 1), ...overrides, trainingEngine,
  });
  await trainer.start();
  return { store, serving, trainer, trainingEngine, changes: () => changes, advance: (ms: number) => void (now += ms) };
}
