/**
 * Wire shapes of the Tinker HTTP API (Thinking Machines' hosted service and self-hosted servers
 * such as SkyRL's `skyrl/tinker/api.py`), JSON transport, as `engines.md` §5 records them from the
 * SDK (`tinker` 0.25), SkyRL and tinker-cookbook. Requests are built and responses parsed here only;
 * the client and the engine work in camelCase. The test server (`testing/`) parses requests with
 * the same schemas, so both sides agree on one reading of the protocol.
 */
import { z } from 'zod';

/** `{data, dtype, shape}`: a flat tensor; only dense tensors are sent or read. */
export const tensorDataSchema = z.object({
  data: z.array(z.number()),
  dtype: z.enum(['int64', 'float32']),
  shape: z.array(z.number().int().nonnegative()).nullish(),
});
export type WireTensorData = z.infer<typeof tensorDataSchema>;

export const modelInputSchema = z.object({
  chunks: z.array(z.object({ type: z.literal('encoded_text'), tokens: z.array(z.number().int().nonnegative()) })).min(1),
});
export type WireModelInput = z.infer<typeof modelInputSchema>;

export const datumSchema = z.object({
  model_input: modelInputSchema,
  loss_fn_inputs: z.record(z.string(), tensorDataSchema),
});
export type WireDatum = z.infer<typeof datumSchema>;

export type WireLossFunction = 'importance_sampling' | 'ppo';

export const lossFunctionConfigSchema = z.object({ clip_low_threshold: z.number().optional(), clip_high_threshold: z.number().optional() }).nullish();

export const forwardBackwardInputSchema = z.object({
  data: z.array(datumSchema).min(1),
  loss_fn: z.string(),
  loss_fn_config: lossFunctionConfigSchema,
});

/** A mutating call's answer: the future to poll (SkyRL adds `future_id` and `status`). */
export const futureResponseSchema = z.object({ request_id: z.union([z.string(), z.number()]).transform(String), model_id: z.string().nullish() }).transform((wire) => ({ requestId: wire.request_id }));

/** `retrieve_future` answers, besides the result itself. */
export const tryAgainSchema = z.object({ type: z.literal('try_again'), request_id: z.union([z.string(), z.number()]).optional(), queue_state: z.string().optional() });
export const requestFailedSchema = z.object({ error: z.string(), category: z.enum(['user', 'server', 'unknown']).catch('unknown') });
/** HTTP error bodies: FastAPI's `{detail}` (SkyRL), or a message object. */
export const httpErrorBodySchema = z.object({ detail: z.unknown().optional(), message: z.string().optional(), error: z.unknown().optional() });

/**
 * `/api/v1/client/config`: the server's flags for this SDK version (`types/client_config_response.py`).
 * Only what this client acts on is read; a missing flag keeps the SDK's default.
 */
export const clientConfigResponseSchema = z
  .object({
    pjwt_auth_enabled: z.boolean().default(false),
    fwdbwd_max_chunk_len: z.number().int().positive().nullish(),
    fwdbwd_max_chunk_bytes_count: z.number().int().positive().nullish(),
  })
  .passthrough()
  .transform((wire) => ({ tokenExchange: wire.pjwt_auth_enabled, maxChunkDatums: wire.fwdbwd_max_chunk_len ?? null, maxChunkBytes: wire.fwdbwd_max_chunk_bytes_count ?? null }));
/** `/api/v1/auth/token`: the short-lived JWT the key is traded for. */
export const authTokenResponseSchema = z.object({ jwt: z.string().min(1) });
/** The archive route's 200 answer (the SDK's "future 200 JSON contract"); its 302 carries the same URL as `Location`. */
export const archiveUrlResponseSchema = z.object({ url: z.string().url(), expires: z.string().nullish() });

export const createSessionResponseSchema = z
  .object({ session_id: z.string(), warning_message: z.string().nullish(), error_message: z.string().nullish() })
  .transform((wire) => ({ sessionId: wire.session_id, warning: wire.warning_message ?? null, error: wire.error_message ?? null }));
export const serverCapabilitiesSchema = z
  .object({
    supported_models: z.array(z.object({ model_name: z.string().nullish(), max_context_length: z.number().nullish() })).default([]),
    supported_loss_fns: z.array(z.string()).nullish(),
  })
  .transform((wire) => ({
    models: wire.supported_models.flatMap((model) => (typeof model.model_name === 'string' ? [{ name: model.model_name, contextLength: model.max_context_length ?? null }] : [])),
  }));
export const createModelResultSchema = z.object({ model_id: z.string() }).transform((wire) => ({ modelId: wire.model_id }));
/** The target log-probs of each datum, and Tinker's summed loss where the service reports it. */
export const forwardBackwardResultSchema = z
  .object({
    loss_fn_output_type: z.string().nullish(),
    loss_fn_outputs: z.array(z.object({ logprobs: tensorDataSchema }).passthrough()),
    metrics: z.record(z.string(), z.number()).default({}),
  })
  .transform((wire) => ({ targetLogprobs: wire.loss_fn_outputs.map((output) => output.logprobs.data), lossSum: wire.metrics['loss:sum'] ?? null }));
export const optimStepResultSchema = z.object({ metrics: z.record(z.string(), z.number()).nullish() });
export const savedPathResultSchema = z.object({ path: z.string() });
export const emptyResultSchema = z.unknown();

/** AdamW as clawrl names it; `optimStepBody` sends it as Tinker's `adam_params`. */
export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  epsilon: number;
  weightDecay: number;
  /** 0: no clipping. */
  maxGradientNorm: number;
}
export const adamParamsSchema = z.object({
  learning_rate: z.number().positive(),
  beta1: z.number().default(0.9),
  beta2: z.number().default(0.95),
  eps: z.number().default(1e-12),
  weight_decay: z.number().default(0),
  grad_clip_norm: z.number().default(0),
});

/** Request bodies, by path; the client adds `seq_id` where the call is ordered per model. */
export const requestSchemas = {
  'client/config': z.object({ sdk_version: z.string() }),
  'auth/token': z.object({}),
  create_session: z.object({ tags: z.array(z.string()).default([]), user_metadata: z.record(z.string(), z.unknown()).nullish(), sdk_version: z.string().optional(), type: z.literal('create_session').optional() }),
  session_heartbeat: z.object({ session_id: z.string() }),
  create_model: z.object({
    session_id: z.string(),
    model_seq_id: z.number().int().nonnegative().optional(),
    base_model: z.string(),
    lora_config: z.object({ rank: z.number().int().positive(), seed: z.number().nullish(), train_unembed: z.boolean().optional(), train_mlp: z.boolean().optional(), train_attn: z.boolean().optional() }),
  }),
  unload_model: z.object({ model_id: z.string() }),
  forward: z.object({ model_id: z.string(), seq_id: z.number().int(), forward_input: forwardBackwardInputSchema }),
  forward_backward: z.object({ model_id: z.string(), seq_id: z.number().int(), forward_backward_input: forwardBackwardInputSchema }),
  optim_step: z.object({ model_id: z.string(), seq_id: z.number().int(), adam_params: adamParamsSchema }),
  save_weights_for_sampler: z.object({ model_id: z.string(), seq_id: z.number().int(), path: z.string().regex(/^[A-Za-z0-9_-]+$/) }),
  save_weights: z.object({ model_id: z.string(), seq_id: z.number().int(), path: z.string().regex(/^[A-Za-z0-9_-]+$/) }),
  load_weights: z.object({ model_id: z.string(), seq_id: z.number().int(), path: z.string(), optimizer: z.boolean().default(false) }),
  retrieve_future: z.object({ request_id: z.union([z.string(), z.number()]).transform(String) }),
  create_sampling_session: z.object({ session_id: z.string(), sampling_session_seq_id: z.number().int().nonnegative(), base_model: z.string().nullish(), model_path: z.string().nullish() }),
  asample: z.object({
    sampling_session_id: z.string(),
    seq_id: z.number().int(),
    num_samples: z.number().int().positive().default(1),
    prompt: modelInputSchema,
    sampling_params: z.object({
      max_tokens: z.number().int().positive(),
      temperature: z.number().min(0).default(1),
      top_k: z.number().int().default(-1),
      top_p: z.number().gt(0).max(1).default(1),
      seed: z.number().int().nullish(),
      stop: z.union([z.array(z.string()), z.array(z.number().int())]).nullish(),
    }),
    prompt_logprobs: z.boolean().default(false),
    topk_prompt_logprobs: z.number().int().min(0).default(0),
  }),
};

export const samplingSessionResultSchema = z.object({ sampling_session_id: z.string() }).transform((wire) => ({ samplingSessionId: wire.sampling_session_id }));
export const sampleResultSchema = z
  .object({
    sequences: z.array(z.object({ tokens: z.array(z.number().int()), logprobs: z.array(z.number()).nullish(), stop_reason: z.string().nullish() })),
    prompt_logprobs: z.array(z.number().nullable()).nullish(),
    topk_prompt_logprobs: z.array(z.array(z.tuple([z.number().int(), z.number()])).nullable()).nullish(),
  })
  .transform((wire) => ({
    sequences: wire.sequences.map((sequence) => ({ tokens: sequence.tokens, logprobs: sequence.logprobs ?? null, stopReason: sequence.stop_reason ?? null })),
    /** One per prompt token, the first null (it has no context). */
    promptLogprobs: wire.prompt_logprobs ?? null,
    topPromptLogprobs: wire.topk_prompt_logprobs ?? null,
  }));
export type SampleResult = z.output<typeof sampleResultSchema>;

export function createSamplingSessionBody(sessionId: string, samplingSessionSeqId: number, source: { baseModel: string } | { modelPath: string }) {
  return {
    session_id: sessionId,
    sampling_session_seq_id: samplingSessionSeqId,
    ...('baseModel' in source ? { base_model: source.baseModel } : { model_path: source.modelPath }),
    type: 'create_sampling_session',
  };
}

export interface SampleBodyOptions {
  samplingSessionId: string;
  seqId: number;
  promptTokenIds: number[];
  numSamples: number;
  maxTokens: number;
  temperature: number;
  /** 0: no top-k filter (Tinker's −1). */
  topK: number;
  topP: number;
  seed: number | null;
  stopTokenIds: readonly number[];
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
}

export function sampleBody(options: SampleBodyOptions) {
  return {
    sampling_session_id: options.samplingSessionId,
    seq_id: options.seqId,
    num_samples: options.numSamples,
    prompt: { chunks: [{ type: 'encoded_text', tokens: options.promptTokenIds }] },
    sampling_params: {
      max_tokens: options.maxTokens,
      temperature: options.temperature,
      top_k: options.topK > 0 ? options.topK : -1,
      top_p: options.topP,
      seed: options.seed,
      stop: [...options.stopTokenIds],
    },
    prompt_logprobs: options.promptLogprobs,
    topk_prompt_logprobs: options.topkPromptLogprobs,
    type: 'sample',
  };
}

const tensor = (data: number[], dtype: WireTensorData['dtype']): WireTensorData => ({ data, dtype, shape: [data.length] });

/** One next-token-aligned datum: input = tokens[:-1], targets = tokens[1:], one loss input per target. */
export function wireDatumOf(tokens: readonly number[], logprobs: number[], advantages: number[]): WireDatum {
  return {
    model_input: { chunks: [{ type: 'encoded_text', tokens: tokens.slice(0, -1) }] },
    loss_fn_inputs: { target_tokens: tensor(tokens.slice(1), 'int64'), logprobs: tensor(logprobs, 'float32'), advantages: tensor(advantages, 'float32') },
  };
}

/** The ratio bounds of Tinker's `ppo` (absolute, not ε). */
export function wireLossConfigOf(loss: { clipLow: number; clipHigh: number } | null): z.infer<typeof lossFunctionConfigSchema> {
  return loss === null ? null : { clip_low_threshold: 1 - loss.clipLow, clip_high_threshold: 1 + loss.clipHigh };
}

export function forwardBackwardBody(modelId: string, seqId: number, data: WireDatum[], lossFunction: WireLossFunction, config: z.infer<typeof lossFunctionConfigSchema>, forwardOnly: boolean) {
  const input = { data, loss_fn: lossFunction, loss_fn_config: config ?? null };
  return forwardOnly ? { model_id: modelId, seq_id: seqId, forward_input: input } : { model_id: modelId, seq_id: seqId, forward_backward_input: input };
}

/**
 * `train_unembed` is always false: an unembedding LoRA is exported as `unembed_tokens` tensors that
 * no PEFT loader (vLLM, SGLang, clawrl's local engine) takes, so a version trained with it could be
 * served only by Tinker itself, and a state saved with it could not be loaded into a training client
 * created without it. tinker-cookbook's own serving tests train without it too
 * (`tests/weights/gpu/conftest.py` `train_one_step`).
 */
export function createModelBody(sessionId: string, modelSeqId: number, baseModel: string, rank: number) {
  return {
    session_id: sessionId,
    model_seq_id: modelSeqId,
    base_model: baseModel,
    lora_config: { rank, seed: null, train_unembed: false, train_mlp: true, train_attn: true },
    user_metadata: null,
    type: 'create_model',
  };
}

export const clientConfigBody = (sdkVersion: string) => ({ sdk_version: sdkVersion });
export const createSessionBody = (sdkVersion: string) => ({ tags: ['clawrl'], user_metadata: {}, sdk_version: sdkVersion, type: 'create_session' });
export const heartbeatBody = (sessionId: string) => ({ session_id: sessionId, type: 'session_heartbeat' });
export const unloadModelBody = (modelId: string) => ({ model_id: modelId, type: 'unload_model' });
export const retrieveFutureBody = (requestId: string) => ({ request_id: requestId, allow_metadata_only: false });
export const optimStepBody = (modelId: string, seqId: number, adam: AdamParams) => ({
  model_id: modelId,
  seq_id: seqId,
  adam_params: { learning_rate: adam.learningRate, beta1: adam.beta1, beta2: adam.beta2, eps: adam.epsilon, weight_decay: adam.weightDecay, grad_clip_norm: adam.maxGradientNorm },
  type: 'optim_step',
});
export const saveBody = (kind: 'save_weights' | 'save_weights_for_sampler', modelId: string, seqId: number, name: string) => ({ model_id: modelId, seq_id: seqId, path: name, type: kind });
export const loadWeightsBody = (modelId: string, seqId: number, path: string, optimizer: boolean) => ({ model_id: modelId, seq_id: seqId, path, optimizer, type: 'load_weights' });

/** `tinker://<model_id>/<weights|sampler_weights>/<name>`, the paths saves return and loads take. */
export function parseTinkerPath(value: string): { modelId: string; kind: 'weights' | 'sampler_weights'; name: string } | null {
  const match = /^tinker:\/\/([A-Za-z0-9_-]+)\/(weights|sampler_weights)\/([A-Za-z0-9_-]+)$/.exec(value);
  if (match === null) return null;
  return { modelId: match[1] ?? '', kind: match[2] === 'weights' ? 'weights' : 'sampler_weights', name: match[3] ?? '' };
}

export const tinkerPathOf = (modelId: string, kind: 'weights' | 'sampler_weights', name: string) => `tinker://${modelId}/${kind}/${name}`;
