/** One session's conversation: each main turn with what the user said, the reply and its judging. */
import { useEffect, useState } from 'preact/hooks';
import type { SessionTurnView, SessionTurnsResponse } from '../../gateway/admin/dashboard-api.js';
import { AdminKeyRefused, adminRequest } from './admin-client.js';
import { formatTime } from './format-time.js';
import { JudgementSummary } from './judgement-summary.js';

export function SessionPage(props: { sessionId: string; onRefused: () => void }) {
  const [session, setSession] = useState<SessionTurnsResponse['session'] | null>(null);
  const [turns, setTurns] = useState<SessionTurnView[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (from: number) => {
    try {
      const page = await adminRequest<SessionTurnsResponse>(`/admin/dashboard/sessions/${encodeURIComponent(props.sessionId)}/turns?from=${from}&limit=50`);
      setSession(page.session);
      setTurns((previous) => (from === 0 ? page.turns : [...previous, ...page.turns]));
      setNext(page.next);
    } catch (caught) {
      if (caught instanceof AdminKeyRefused) props.onRefused();
      else setError(caught instanceof Error ? caught.message : String(caught));
    }
  };
  useEffect(() => {
    void load(0);
  }, [props.sessionId]);

  if (error !== null) return <p class="error">{error}</p>;
  if (session === null) return <p class="muted">Loading…</p>;
  return (
    <section>
      <h2>Session {session.id}</h2>
      <p class="muted">
        {session.status}
        {session.closeReason === null ? '' : ` (${session.closeReason})`} · {session.mainTurns} main turns, {session.sideTurns} side · started {formatTime(session.createdAt)}
        {session.tenant === null ? '' : ` · tenant ${session.tenant}`}
      </p>
      <ol class="conversation">
        {turns.map((turn) => (
          <li key={turn.id} class="turn" data-turn-id={turn.id}>
            <div class="turn-head">
              <a href={`#/turns/${encodeURIComponent(turn.id)}`}>turn {turn.index}</a>
              <span class="muted"> · version {turn.policyVersion} · {formatTime(turn.startedAt)}</span>
            </div>
            <div class="message user">{turn.input}</div>
            {/* An agent's system prompt can run to tens of thousands of characters: the user's message comes first, the prompt folded. */}
            {turn.system === null ? null : (
              <details class="system-prompt" data-testid="system-prompt">
                <summary>System prompt ({turn.system.length.toLocaleString('en')} characters)</summary>
                <div class="message system">{turn.system}</div>
              </details>
            )}
            <div class="message assistant">{turn.response}</div>
            <JudgementSummary judgement={turn.judgement} sample={turn.sample} />
          </li>
        ))}
      </ol>
      {next === null ? null : <button type="button" onClick={() => void load(next)}>More turns</button>}
    </section>
  );
}
