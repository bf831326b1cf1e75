/**
 * Whether a vLLM server takes `tool_choice: "auto"`: stock `vllm serve` answers a chat request that
 * offers tools with HTTP 400 (`"auto" tool choice requires --enable-auto-tool-choice and
 * --tool-call-parser to be set`), and `"auto"` is both what clawrl forwards and vLLM's own default
 * whenever tools are present. Agents send tools with every request, so such a server fails every
 * agent turn. One chat request of one token with a dummy tool finds out before anything is served.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { createUpstreamClient, UpstreamHttpError } from './upstream-client.js';

export interface AutoToolChoiceProbeOptions {
  /** Server root, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** The model name the server serves (its `--served-model-name`, or the path it loaded). */
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

/**
 * `accepted`: the server answered the request; `refused`: it refused `"auto"` for want of the flags
 * (its message is kept); `unknown`: it did not say (not reachable yet, a wrong key or model name, a time-out).
 */
export type AutoToolChoiceProbeResult = { outcome: 'accepted' } | { outcome: 'refused'; message: string } | { outcome: 'unknown'; reason: string };

const probeRequest = (model: string): unknown => ({
  model,
  messages: [{ role: 'user', content: 'Reply with one word.' }],
  tools: [{ type: 'function', function: { name: 'clawrl_probe', description: 'Never called: clawrl checks that the server takes tools.', parameters: { type: 'object', properties: {} } } }],
  tool_choice: 'auto',
  max_tokens: 1,
  stream: false,
});

export async function probeAutoToolChoice(options: AutoToolChoiceProbeOptions): Promise<AutoToolChoiceProbeResult> {
  const client = createUpstreamClient({ baseUrl: options.baseUrl, timeoutMs: options.timeoutMs, name: 'vllm', ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }) });
  try {
    await client.postJson('/v1/chat/completions', probeRequest(options.model));
    return { outcome: 'accepted' };
  } catch (error) {
    const cause = ClawrlError.isInstance(error) ? error.cause : undefined;
    if (cause instanceof UpstreamHttpError && cause.status === 400 && /enable-auto-tool-choice|tool-call-parser/.test(cause.upstreamMessage)) {
      return { outcome: 'refused', message: cause.upstreamMessage };
    }
    return { outcome: 'unknown', reason: error instanceof Error ? error.message : String(error) };
  } finally {
    client.close();
  }
}
