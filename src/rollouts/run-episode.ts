/**
 * One rollout of one environment through a server's HTTP API, with the official `openai` client:
 * the route agents use, so the server records, judges and trains on it exactly like live traffic.
 * Every request carries the episode's session (`X-Session-Id`) and `X-Turn-Type: main` (`side`
 * for held-out evaluation); each response's `X-Clawrl-Turn-Id` names the turn the server recorded,
 * which is what the driver's feedback later refers to (the group and rewards travel there, see
 * `run-rollout.ts`). The environment answers each reply until it is done or `maxTurns` replies were
 * given; an episode cut off there is scored by the verifier on an empty outcome.
 *
 * Requests are never retried: a retried main turn would be recorded twice in its session.
 */
import type OpenAI from 'openai';
import type { ChatMessage } from '../spec/chat.js';
import type { EnvironmentDefinition, EnvironmentOutcome, EnvironmentTask, Verdict } from '../spec/environment.js';
import { fromWireAssistant, toWireMessage, toWireTool } from './episode-chat-api.js';

export interface EpisodeSampling {
  temperature?: number;
  maxTokens?: number;
  seed?: number;
}

export interface EpisodeOptions {
  client: OpenAI;
  model: string;
  definition: EnvironmentDefinition;
  task: EnvironmentTask;
  sessionId: string;
  /** Extra request headers (a tenant's routing, say); the session and turn type are set here. */
  headers?: Record<string, string>;
  sampling?: EpisodeSampling;
  /** `side` for held-out evaluation: recorded, never judged or trained on (default `main`). */
  turnType?: 'main' | 'side';
}

export interface EpisodeTurn {
  /** From `X-Clawrl-Turn-Id`; null when the server did not say (not a clawrl server). */
  turnId: string | null;
  policyVersion: number | null;
  action: ChatMessage;
  finishReason: string | null;
  /** What the environment answered (tool results); empty for the last turn. */
  observation: ChatMessage[];
}

export interface EpisodeResult {
  taskId: string;
  sessionId: string;
  /** The whole conversation: initial messages, then each action and its observation. */
  transcript: ChatMessage[];
  turns: EpisodeTurn[];
  turnIds: string[];
  outcome: EnvironmentOutcome;
  verdict: Verdict;
  /** Cut off at `maxTurns` before the environment was done. */
  truncated: boolean;
}

function versionOf(header: string | null): number | null {
  const value = header === null ? Number.NaN : Number(header);
  return Number.isInteger(value) && value >= 0 ? value : null;
}

export async function runEpisode(options: EpisodeOptions): Promise<EpisodeResult> {
  const { client, definition, task } = options;
  const environment = await definition.create(task);
  try {
    const first = await environment.initialObservation();
    const transcript: ChatMessage[] = [...first.messages];
    const tools = first.tools.map(toWireTool);
    const headers = { ...options.headers, 'x-session-id': options.sessionId, 'x-turn-type': options.turnType ?? 'main' };
    const turns: EpisodeTurn[] = [];
    const sampling = options.sampling ?? {};
    for (let turn = 0; turn < definition.maxTurns; turn += 1) {
      const { data, response } = await client.chat.completions
        .create(
          {
            model: options.model,
            messages: transcript.map(toWireMessage),
            ...(tools.length === 0 ? {} : { tools }),
            ...(sampling.temperature === undefined ? {} : { temperature: sampling.temperature }),
            ...(sampling.maxTokens === undefined ? {} : { max_tokens: sampling.maxTokens }),
            ...(sampling.seed === undefined ? {} : { seed: sampling.seed + turn }),
          },
          { headers, maxRetries: 0 },
        )
        .withResponse();
      const choice = data.choices[0];
      const action: ChatMessage = choice === undefined ? { role: 'assistant', content: '' } : fromWireAssistant(choice.message);
      transcript.push(action);
      const result = await environment.step(action);
      transcript.push(...result.observation);
      turns.push({
        turnId: response.headers.get('x-clawrl-turn-id'),
        policyVersion: versionOf(response.headers.get('x-clawrl-policy-version')),
        action,
        finishReason: choice?.finish_reason ?? null,
        observation: result.observation,
      });
      if (result.done) {
        const outcome = result.outcome ?? {};
        return finish(transcript, turns, outcome, result.verdict ?? definition.verify(task, outcome), false);
      }
    }
    const verdict = definition.verify(task, {});
    return finish(transcript, turns, {}, { ...verdict, reward: 0, correct: false, detail: `not done after ${definition.maxTurns} replies; ${verdict.detail}` }, true);
  } finally {
    await environment.close();
  }

  function finish(transcript: ChatMessage[], turns: EpisodeTurn[], outcome: EnvironmentOutcome, verdict: Verdict, truncated: boolean): EpisodeResult {
    const turnIds = turns.flatMap((turn) => (turn.turnId === null ? [] : [turn.turnId]));
    return { taskId: task.id, sessionId: options.sessionId, transcript, turns, turnIds, outcome, verdict, truncated };
  }
}
