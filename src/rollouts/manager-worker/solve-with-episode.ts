/**
 * What `clawrl worker` does with a task: one rollout with the rollout driver's episode runner
 * (`run-episode.ts`, the official `openai` client against the gateway), so the server records and
 * judges it like any traffic; then the summary a result carries. The manager's feedback marks the
 * turn as a rollout's.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentDefinition } from '../../spec/environment.js';
import type { RolloutClient } from '../rollout-client.js';
import { runEpisode, type EpisodeResult, type EpisodeSampling } from '../run-episode.js';
import type { SolveTask } from './run-worker.js';
import type { TranscriptSummary } from './rollout-queue-api.js';

export interface SolveWithEpisodeOptions {
  client: RolloutClient;
  definition: EnvironmentDefinition;
  sampling?: EpisodeSampling;
}

const finalMessageChars = 2_000;

export function summarizeEpisode(episode: EpisodeResult): TranscriptSummary {
  const actions = episode.turns.map((turn) => turn.action);
  return {
    turns: actions.length,
    toolCalls: actions.reduce((count, action) => count + (action.toolCalls?.length ?? 0), 0),
    finalMessage: (actions.at(-1)?.content ?? '').slice(0, finalMessageChars),
    finish: episode.truncated ? 'max-turns' : 'done',
  };
}

export function solveWithEpisode(options: SolveWithEpisodeOptions): SolveTask {
  return async ({ task }, sessionId) => {
    const episode = await runEpisode({
      client: options.client.openai,
      model: await options.client.modelName(),
      definition: options.definition,
      task,
      sessionId,
      ...(options.sampling === undefined ? {} : { sampling: options.sampling }),
    });
    if (episode.turnIds.length === 0) {
      throw new ClawrlError('upstream_error', 'the server named no turn (no X-Clawrl-Turn-Id): --url must be a clawrl server, whose turns the manager gives feedback on');
    }
    return { sessionId: episode.sessionId, turnIds: episode.turnIds, outcome: episode.outcome, transcript: summarizeEpisode(episode) };
  };
}
