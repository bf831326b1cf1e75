/**
 * An in-process `InferenceEngine` for gateway tests: it replies with scripted text or tool calls,
 * one token per character, with deterministic ids and log-probs, and records its calls. It
 * implements the seam faithfully (event order, abort, n choices) so gateway tests exercise the
 * real contract.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ToolCall } from '../../spec/chat.js';
import type {
  ChoiceResult,
  GenerateEvent,
  GenerateRequest,
  InferenceEngine,
  PolicyArtifact,
  ScoreRequest,
  ScoreResult,
} from '../../spec/inference-engine.js';

export interface ScriptedReply {
  text: string;
  toolCalls?: ToolCall[];
}

export interface ScriptedInferenceEngine extends InferenceEngine {
  readonly generateCalls: GenerateRequest[];
  /** Milliseconds between tokens. */
  tokenDelayMs: number;
  /** Throw this on the next generate, before starting. */
  failNext: ClawrlError | null;
  /** Throw this on the next generate, after its first token. */
  failNextMidStream: ClawrlError | null;
  policyVersion: number;
}

const idOf = (character: string) => (character.codePointAt(0) ?? 0) + 10;
const promptIdsOf = (request: GenerateRequest) =>
  Array.from(request.messages.map((message) => `${message.role}:${message.content}`).join('|')).map(idOf);

export function createScriptedInferenceEngine(options: {
  modelId?: string;
  reply?: (request: GenerateRequest, choiceIndex: number) => ScriptedReply;
  trainable?: boolean;
  /** Declares that it enforces forced tool calls and structured output (it records them, nothing more). */
  constrained?: boolean;
}): ScriptedInferenceEngine {
  const reply: (request: GenerateRequest, choiceIndex: number) => ScriptedReply =
    options.reply ?? ((request) => ({ text: `echo: ${request.messages.at(-1)?.content ?? ''}` }));
  const engine: ScriptedInferenceEngine = {
    engineId: 'scripted',
    modelId: options.modelId ?? 'scripted-model',
    capabilities: { tokenIds: options.trainable ?? true, scoring: false, temperatureScoring: false, policyLoading: false, forcedToolChoice: options.constrained ?? false, responseFormats: options.constrained === true ? ['json_object', 'json_schema'] : [] },
    contextLength: 4096,
    generateCalls: [],
    tokenDelayMs: 0,
    failNext: null,
    failNextMidStream: null,
    policyVersion: 0,

    async *generate(request: GenerateRequest, signal: AbortSignal): AsyncIterable<GenerateEvent> {
      engine.generateCalls.push(request);
      if (engine.failNext !== null) {
        const failure = engine.failNext;
        engine.failNext = null;
        throw failure;
      }
      const midStreamFailure = engine.failNextMidStream;
      engine.failNextMidStream = null;
      const promptTokenIds = promptIdsOf(request);
      const trainable = options.trainable ?? true;
      yield { type: 'start', promptTokenIds: trainable ? promptTokenIds : [], policyVersion: request.policyVersion ?? engine.policyVersion };
      const choices: ChoiceResult[] = [];
      for (let choiceIndex = 0; choiceIndex < request.sampling.n; choiceIndex += 1) {
        const scripted = reply(request, choiceIndex);
        const limit = request.sampling.maxTokens ?? Number.POSITIVE_INFINITY;
        let text = scripted.text;
        for (const stop of request.sampling.stop) {
          const at = text.indexOf(stop);
          if (at >= 0) text = text.slice(0, at);
        }
        const characters = Array.from(text).slice(0, limit);
        let finishReason: ChoiceResult['finishReason'] = characters.length < Array.from(text).length ? 'length' : 'stop';
        const ids: number[] = [];
        for (const character of characters) {
          if (signal.aborted) {
            finishReason = 'aborted';
            break;
          }
          if (engine.tokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, engine.tokenDelayMs));
          const id = idOf(character);
          ids.push(id);
          const logprob = -((id % 7) + 1) / 10;
          yield { type: 'tokens', choiceIndex, tokens: [{ id, text: character, logprob, top: [{ id, text: character, logprob }] }] };
          yield { type: 'text-delta', choiceIndex, text: character };
          if (midStreamFailure !== null) throw midStreamFailure;
        }
        const toolCalls = finishReason === 'aborted' ? [] : (scripted.toolCalls ?? []);
        // Two deltas per call, as real engines split names from argument text.
        for (const [toolCallIndex, call] of toolCalls.entries()) {
          yield { type: 'tool-call-delta', choiceIndex, toolCallIndex, id: call.id, name: call.name, argumentsDelta: '' };
          yield { type: 'tool-call-delta', choiceIndex, toolCallIndex, argumentsDelta: call.arguments };
        }
        if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
        yield { type: 'choice-end', choiceIndex, finishReason };
        choices.push({
          index: choiceIndex,
          message: { role: 'assistant', content: characters.join(''), ...(toolCalls.length > 0 ? { toolCalls } : {}) },
          toolCalls,
          responseTokenIds: trainable ? ids : [],
          logprobs: trainable ? ids.map((id) => -((id % 7) + 1) / 10) : [],
          finishReason,
        });
      }
      if (signal.aborted) return;
      yield {
        type: 'end',
        result: {
          promptTokenIds: trainable ? promptTokenIds : [],
          choices,
          policyVersion: request.policyVersion ?? engine.policyVersion,
          trainable,
          usage: {
            promptTokens: promptTokenIds.length,
            completionTokens: choices.reduce((sum, choice) => sum + Array.from(choice.message.content).length, 0),
          },
        },
      };
    },
    async score(_request: ScoreRequest): Promise<ScoreResult> {
      throw new ClawrlError('unsupported', 'the scripted engine does not score');
    },
    async loadPolicy(_artifact: PolicyArtifact): Promise<void> {
      throw new ClawrlError('unsupported', 'the scripted engine does not load policies');
    },
    async close() {},
  };
  return engine;
}

/** An agent's model for tool round trips: calls `get_weather` (call id `callId`) when asked about the weather and no result is in yet, answers from a result, otherwise echoes. */
export function createWeatherAgentEngine(callId: string): ScriptedInferenceEngine {
  return createScriptedInferenceEngine({
    reply: (request: GenerateRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { text: `It is ${last.content} there.` };
      if (last?.content.includes('weather') === true) {
        return { text: 'Let me look.', toolCalls: [{ id: callId, name: 'get_weather', arguments: '{"city":"Paris"}' }] };
      }
      return { text: `echo: ${last?.content ?? ''}` };
    },
  });
}
