/**
 * The start-up check of a vLLM upstream that serves agents (`serve`, `gateway`): a server started
 * without `--enable-auto-tool-choice --tool-call-parser <parser>` refuses every request that offers
 * tools, and agents offer tools with every request, so the process refuses to start and says which
 * flags to add. A server that cannot be asked yet (still loading, a wrong key or model name) is
 * only warned about: the health check and the first request report it in their own words.
 *
 * SGLang needs no such check: clawrl renders the tools into the prompt itself, sends token ids to
 * `/generate` and parses tool calls from the returned ids, so SGLang's `--tool-call-parser` does not
 * apply. Judge processes send no tools, so they are not checked either.
 */
import { probeAutoToolChoice } from '../../engines/openai-compatible/probe-auto-tool-choice.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { upstreamModelOf, type EngineConfiguration } from './create-inference-engine.js';

/** A one-token answer; longer only when the server is busy, and then the check is not worth the wait. */
const probeTimeoutMs = 20_000;

export async function checkUpstreamToolCalling(
  configuration: Pick<EngineConfiguration, 'engine' | 'model' | 'servedModelName' | 'upstream' | 'upstreamModel' | 'upstreamApiKey' | 'upstreamTimeout'>,
  logger: Logger,
): Promise<void> {
  if (configuration.engine !== 'vllm' || configuration.upstream === undefined) return;
  const result = await probeAutoToolChoice({
    baseUrl: configuration.upstream,
    model: upstreamModelOf(configuration),
    timeoutMs: Math.min(configuration.upstreamTimeout, probeTimeoutMs),
    ...(configuration.upstreamApiKey === undefined ? {} : { apiKey: configuration.upstreamApiKey }),
  });
  if (result.outcome === 'refused') {
    throw new ClawrlError(
      'configuration_error',
      `the vllm server at ${configuration.upstream} refuses tool calls (${result.message}), and agents send tools with every request: start vllm serve with --enable-auto-tool-choice --tool-call-parser <parser for the model: hermes for Qwen2.5 and Qwen3, qwen3_xml for Qwen3-Coder, llama3_json for Llama 3.1 and 3.2> (docs/deployment.md, "First run on a GPU").`,
      { param: 'upstream' },
    );
  }
  if (result.outcome === 'unknown') {
    logger.warn('could not check that the vllm server takes tool calls (--enable-auto-tool-choice --tool-call-parser); agent requests fail if it does not', { reason: result.reason });
  }
}
