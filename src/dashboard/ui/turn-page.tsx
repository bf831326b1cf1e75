/**
 * A turn's exact tokens: the prompt as the engine saw it, and the response coloured by each token's
 * log-prob, or, for an OPD or combine sample, by the teacher's gap (teacher − rollout log-prob).
 */
import { useEffect, useState } from 'preact/hooks';
import type { TurnTokensResponse } from '../../gateway/admin/dashboard-api.js';
import { AdminKeyRefused, adminRequest } from './admin-client.js';
import { JudgementSummary } from './judgement-summary.js';

type Colouring = 'logprob' | 'gap';

/** Log-probs from −6 (red) to 0 (green); gaps from −2 (red) through 0 (white) to +2 (blue). */
function backgroundOf(colouring: Colouring, logprob: number | null, gap: number | null): string {
  if (colouring === 'logprob') {
    if (logprob === null) return 'transparent';
    const share = Math.max(0, Math.min(1, 1 + logprob / 6));
    return `hsl(${Math.round(share * 120)}, 75%, 82%)`;
  }
  if (gap === null) return 'transparent';
  const strength = Math.min(1, Math.abs(gap) / 2);
  return `hsl(${gap < 0 ? 0 : 215}, 80%, ${Math.round(100 - strength * 28)}%)`;
}

function shown(text: string | null, id: number): string {
  return text === null ? `#${id} ` : text;
}

export function TurnPage(props: { turnId: string; onRefused: () => void }) {
  const [turn, setTurn] = useState<TurnTokensResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [colouring, setColouring] = useState<Colouring>('logprob');
  useEffect(() => {
    adminRequest<TurnTokensResponse>(`/admin/dashboard/turns/${encodeURIComponent(props.turnId)}`).then(setTurn, (caught: unknown) => {
      if (caught instanceof AdminKeyRefused) props.onRefused();
      else setError(caught instanceof Error ? caught.message : String(caught));
    });
  }, [props.turnId]);
  if (error !== null) return <p class="error">{error}</p>;
  if (turn === null) return <p class="muted">Loading…</p>;
  const hasGaps = turn.response.some((token) => token.teacherGap !== null);
  return (
    <section>
      <h2>Turn {turn.index} of <a href={`#/sessions/${encodeURIComponent(turn.sessionId)}`}>{turn.sessionId}</a></h2>
      <p class="muted">{turn.id} · served by version {turn.policyVersion} · {turn.prompt.length} prompt tokens, {turn.response.length} response tokens</p>
      <JudgementSummary judgement={turn.judgement} sample={turn.sample} />
      <h3>Response</h3>
      <div class="toggle">
        <label><input type="radio" checked={colouring === 'logprob'} onChange={() => setColouring('logprob')} /> by log-prob</label>
        <label title={hasGaps ? '' : 'No OPD sample with teacher log-probs for this turn'}>
          <input type="radio" disabled={!hasGaps} checked={colouring === 'gap'} onChange={() => setColouring('gap')} /> by teacher gap (OPD)
        </label>
      </div>
      <pre class="tokens" data-testid="response-tokens">
        {turn.response.map((token, position) => (
          <span
            key={position}
            class="token"
            style={{ background: backgroundOf(colouring, token.logprob, token.teacherGap) }}
            title={`id ${token.id} · log-prob ${token.logprob?.toFixed(3) ?? '–'}${token.teacherGap === null ? '' : ` · teacher gap ${token.teacherGap.toFixed(3)}`}`}
          >
            {shown(token.text, token.id)}
          </span>
        ))}
      </pre>
      <details>
        <summary>Prompt ({turn.prompt.length} tokens)</summary>
        <pre class="tokens prompt">{turn.prompt.map((token) => shown(token.text, token.id)).join('')}</pre>
      </details>
    </section>
  );
}
