/**
 * The work behind the Tinker test server's routes: Tinker datums and losses as the local engine's
 * (see `create-tinker-test-server.ts`), and sampling on an in-process transformer.
 */
import type { z } from 'zod';
import { loadTransformerFromFolder, type Transformer } from '../../../model/transformer.js';
import type { TrainingDatum, TrainingEngine, TrainingLoss } from '../../../spec/training-engine.js';
import { initializeTensorBackend } from '../../../tensor/initialize-tensor-backend.js';
import type { requestSchemas, WireDatum } from '../tinker-api.js';
import { tinkerLossOf } from '../tinker-datums.js';

/** A request the service refuses as the caller's fault (`category: "user"`). */
export class UserError extends Error {}

export type ForwardBackwardInput = z.infer<typeof requestSchemas.forward_backward>['forward_backward_input'];

/** Tinker's `ppo` thresholds (1 − ε_lo, 1 + ε_hi) as the local `ppo` loss's ε. */
export function localLossOf(input: ForwardBackwardInput): TrainingLoss {
  const config = input.loss_fn_config ?? {};
  if (input.loss_fn === 'importance_sampling') return { name: 'importance_sampling' };
  if (input.loss_fn === 'ppo') return { name: 'ppo', clipLow: 1 - (config.clip_low_threshold ?? 0.8), clipHigh: (config.clip_high_threshold ?? 1.2) - 1 };
  throw new UserError(`loss_fn '${input.loss_fn}' is not supported by this server (importance_sampling, ppo)`);
}

/** A Tinker datum as the local engine's datum. */
export function localDatumOf(datum: WireDatum, withAdvantages: boolean): TrainingDatum {
  const input = datum.model_input.chunks.flatMap((chunk) => chunk.tokens);
  const targets = datum.loss_fn_inputs.target_tokens?.data ?? [];
  const logprobs = datum.loss_fn_inputs.logprobs?.data ?? [];
  const advantages = datum.loss_fn_inputs.advantages?.data ?? [];
  if (targets.length !== input.length || logprobs.length !== input.length || advantages.length !== input.length) {
    throw new UserError(`target_tokens, logprobs and advantages need one entry per input token (${input.length})`);
  }
  if (targets.slice(0, -1).some((token, index) => token !== input[index + 1])) throw new UserError('this server trains next-token data only: target_tokens must be the input shifted by one');
  return {
    promptTokenIds: input.slice(0, 1),
    responseTokenIds: targets,
    lossMask: targets.map(() => 1),
    advantages: withAdvantages ? advantages : advantages.map(() => 0),
    rolloutLogprobs: logprobs,
    temperature: 1,
  };
}

/** A forward(-backward) on the local engine, answered as Tinker answers it; `lossSum` adds the `loss:sum` metric. */
export async function runForwardBackward(engine: TrainingEngine, input: ForwardBackwardInput, forwardOnly: boolean, lossSum: boolean) {
  const loss = localLossOf(input);
  // A forward pass runs with zero advantages: zero gradients, the same log-probs.
  const output = await engine.forwardBackward({ data: input.data.map((datum) => localDatumOf(datum, !forwardOnly)), loss, batchLossTokens: 1 });
  const batch = {
    lossFunction: loss.name === 'ppo' ? ('ppo' as const) : ('importance_sampling' as const),
    clip: loss.name === 'ppo' ? { clipLow: loss.clipLow, clipHigh: loss.clipHigh } : null,
    sequences: input.data.map((datum) => ({ tokens: [], logprobs: datum.loss_fn_inputs.logprobs?.data ?? [], advantages: datum.loss_fn_inputs.advantages?.data ?? [] })),
  };
  return {
    loss_fn_output_type: 'TensorData',
    loss_fn_outputs: output.logprobs.map((values) => ({ logprobs: { data: values, dtype: 'float32', shape: [values.length] } })),
    metrics: lossSum ? { 'loss:sum': forwardOnly ? tinkerLossOf(batch, output.logprobs) : output.loss } : {},
  };
}

export interface TinkerTestSampler {
  sample(files: Record<string, Uint8Array> | null, request: z.infer<typeof requestSchemas.asample>): Promise<unknown>;
  dispose(): Promise<void>;
}

/** Sampling on the base model or a saved adapter; the transformer is loaded on the first request. */
export function createTinkerTestSampler(modelDirectory: string, baseModel: string): TinkerTestSampler {
  let sampler: Promise<{ transformer: Transformer; base: Record<string, Uint8Array> }> | null = null;

  /** The in-process sampling transformer, loaded on the first sampling request. */
  function samplerOf() {
    sampler ??= (async () => {
      await initializeTensorBackend({ backend: 'cpu' });
      const transformer = await loadTransformerFromFolder(modelDirectory);
      return { transformer, base: await transformer.exportAdapter({ baseModelNameOrPath: baseModel }) };
    })();
    return sampler;
  }

  async function sample(files: Record<string, Uint8Array> | null, request: z.infer<typeof requestSchemas.asample>) {
    const { transformer, base } = await samplerOf();
    transformer.importAdapter(files ?? base);
    const prompt = request.prompt.chunks.flatMap((chunk) => chunk.tokens);
    const params = request.sampling_params;
    const stop = (params.stop ?? []).filter((entry): entry is number => typeof entry === 'number');
    if ((params.stop ?? []).length !== stop.length) throw new UserError('this server takes stop token ids only');
    const { sequences } = await transformer.sample({
      promptTokenIds: prompt, n: request.num_samples, maxTokens: params.max_tokens, temperature: params.temperature, topP: params.top_p,
      topK: params.top_k > 0 ? params.top_k : 0, stopTokenIds: stop, ...(params.seed === null || params.seed === undefined ? {} : { seed: params.seed }),
    });
    const wantsPrompt = request.prompt_logprobs || request.topk_prompt_logprobs > 0;
    const scored = wantsPrompt && prompt.length > 1 ? await transformer.score({ promptTokenIds: prompt.slice(0, 1), continuationTokenIds: prompt.slice(1), topLogprobs: request.topk_prompt_logprobs }) : null;
    return {
      sequences: sequences.map((sequence) => ({ tokens: sequence.tokenIds, logprobs: sequence.logprobs, stop_reason: sequence.finishReason === 'length' ? 'length' : 'stop' })),
      prompt_logprobs: scored === null ? null : [null, ...scored.logprobs],
      topk_prompt_logprobs: scored === null || request.topk_prompt_logprobs === 0 ? null : [null, ...scored.top.map((entries) => entries.map((entry) => [entry.tokenId, entry.logprob]))],
      type: 'sample',
    };
  }

  return {
    sample,
    async dispose() {
      if (sampler !== null) (await sampler.catch(() => null))?.transformer.dispose();
    },
  };
}
