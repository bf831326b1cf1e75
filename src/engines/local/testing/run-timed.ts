import type { GenerateRequest, GenerateResult, InferenceEngine } from '../../../spec/inference-engine.js';

export interface TimedGeneration {
  result: GenerateResult;
  firstTokenAt: number;
  endAt: number;
}

/** Runs one generation to its end, noting when its first token and its end came (`performance.now()`). */
export async function runTimed(engine: InferenceEngine, request: GenerateRequest): Promise<TimedGeneration> {
  let result: GenerateResult | undefined;
  let firstTokenAt = Number.NaN;
  for await (const event of engine.generate(request, new AbortController().signal)) {
    if (event.type === 'tokens' && Number.isNaN(firstTokenAt)) firstTokenAt = performance.now();
    if (event.type === 'end') result = event.result;
  }
  if (result === undefined) throw new Error('no end event');
  return { result, firstTokenAt, endAt: performance.now() };
}
