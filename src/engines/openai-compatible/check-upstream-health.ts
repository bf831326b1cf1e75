/**
 * Asks an OpenAI-compatible server whether it serves: `GET /v1/models`, which vLLM, SGLang,
 * Ollama and OpenAI itself all answer cheaply (vLLM's and SGLang's `/health` do not exist on the
 * others). Any 2xx is healthy; a refused connection, an HTTP error (a wrong API key too) or no
 * answer before `signal` aborts is not, and the reason says which.
 */
import type { EngineHealth } from '../../spec/inference-engine.js';

export interface UpstreamHealthOptions {
  /** Server root; a trailing `/v1` is tolerated, as everywhere else. */
  baseUrl: string;
  apiKey?: string;
  /** Names the upstream in the reason, e.g. `vllm`. */
  name: string;
  signal: AbortSignal;
}

function modelsUrlOf(baseUrl: string): URL {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return new URL(`${root}/v1/models`);
}

/** fetch's own message is `fetch failed`; the cause's code says what happened. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.message !== undefined) return cause.message;
  if ((error as Error | undefined)?.name === 'AbortError' || (error as Error | undefined)?.name === 'TimeoutError') return 'no answer in time';
  return String((error as Error | undefined)?.message ?? error);
}

export async function checkUpstreamHealth(options: UpstreamHealthOptions): Promise<EngineHealth> {
  const url = modelsUrlOf(options.baseUrl);
  const where = `the ${options.name} upstream at ${url.origin}`;
  try {
    const response = await fetch(url, {
      headers: options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` },
      signal: options.signal,
    });
    // The body is not needed; reading it to the end frees the connection.
    await response.arrayBuffer().catch(() => undefined);
    if (response.ok) return { ok: true };
    return { ok: false, reason: `${where} answered HTTP ${response.status} to GET ${url.pathname}` };
  } catch (error) {
    return { ok: false, reason: `${where} did not answer: ${options.signal.aborted ? 'no answer in time' : reasonOf(error)}` };
  }
}
