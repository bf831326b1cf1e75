/** An `InferenceEngine` that only scores, by a function the test gives; generation is not used by judge tests. */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine, ScoreRequest, ScoreResult } from '../../spec/inference-engine.js';

export interface ScoringEngine extends InferenceEngine {
  readonly scoreRequests: ScoreRequest[];
}

export function createScoringEngine(score: ((request: ScoreRequest) => ScoreResult) | null): ScoringEngine {
  const scoreRequests: ScoreRequest[] = [];
  return {
    engineId: 'scoring-test',
    modelId: 'scoring-model',
    capabilities: { tokenIds: true, scoring: score !== null, temperatureScoring: score !== null, policyLoading: false, forcedToolChoice: false, responseFormats: [] },
    contextLength: undefined,
    scoreRequests,
    generate() {
      throw new ClawrlError('unsupported', 'the scoring test engine does not generate');
    },
    async score(request) {
      scoreRequests.push(request);
      if (score === null) throw new ClawrlError('unsupported', 'this engine does not score');
      return score(request);
    },
    async loadPolicy() {
      throw new ClawrlError('unsupported', 'the scoring test engine does not load policies');
    },
    async close() {},
  };
}
