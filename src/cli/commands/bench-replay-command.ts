/**
 * `clawrl bench replay`: the replay gate's time on recorded sessions (`lab/bench/replay-bench.ts`).
 * The replay is built here as `clawrl serve --gate replay` builds it: the local engine on `--model`
 * with the candidate staged beside the served base, and the judge `--judge policy` makes.
 */
import { fileURLToPath } from 'node:url';
import { formatReplayBench, runReplayBench } from '../../lab/bench/replay-bench.js';
import { loadSimulatedUser } from '../../lab/personalize/load-simulated-user.js';
import { storedPolicyArtifact } from '../../serving/policy-serving.js';
import { runReplayGate } from '../../serving/replay-gate.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { commandSchemas } from '../configuration/configuration-schema.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { createInferenceEngine } from '../wiring/create-inference-engine.js';
import { createJudge } from '../wiring/create-judge.js';
import { replayGateSettingsOf } from '../wiring/create-version-lifecycle.js';
import { openRecordStore } from '../wiring/open-record-store.js';

async function replayRecorded(model: string, data: string, sessions: number): Promise<{ sessions: number; turns: number; decision: string }> {
  const { configuration } = resolveConfiguration(commandSchemas.serve, { flags: { model, data, judge: 'policy', gate: 'replay' }, file: {}, environment: {} });
  const store = await openRecordStore(configuration);
  try {
    const engine = await createInferenceEngine(configuration, { policies: store });
    try {
      if (engine.stagePolicy === undefined) throw new ClawrlError('unsupported', `the ${engine.engineId} engine cannot stage a candidate`);
      await engine.stagePolicy(await storedPolicyArtifact(store, 1));
      // Every replayable turn of the sessions, not the gate's default cap of turns.
      const evidence = await runReplayGate(
        { ...replayGateSettingsOf(configuration), store, engine, judge: createJudge(configuration, engine), now: () => Date.now(), heldOutShare: 0, sessions, maxTurns: Number.MAX_SAFE_INTEGER },
        { candidate: 1, incumbent: 0 },
      );
      return { sessions: evidence.sessions, turns: evidence.turns, decision: evidence.decision };
    } finally {
      await engine.close();
    }
  } finally {
    await store.close();
  }
}

export async function runReplayBenchCommand(options: { json: boolean; quick: boolean; model?: string; sessions?: string }): Promise<void> {
  const model = options.model ?? 'builtin:tiny';
  const sessions = Number(options.sessions ?? (options.quick ? 8 : 200));
  if (!Number.isSafeInteger(sessions) || sessions < 1) throw new ClawrlError('configuration_error', `--sessions takes a positive integer, got '${options.sessions}'.`, { param: 'sessions' });
  const result = await runReplayBench({
    cliScript: fileURLToPath(new URL('../main.js', import.meta.url)),
    model,
    user: loadSimulatedUser('teacher'),
    sessions,
    seed: 1,
    environment: process.env,
    replay: (data, count) => replayRecorded(model, data, count),
    onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
  });
  process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatReplayBench(result)}\n`);
}
