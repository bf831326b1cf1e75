/** Sessions: a searchable list, newest first, read a page at a time (keyset cursor). */
import { useEffect, useState } from 'preact/hooks';
import type { SessionPageResponse, SessionSummary } from '../../gateway/admin/dashboard-api.js';
import { AdminKeyRefused, adminRequest } from './admin-client.js';
import { formatTime } from './format-time.js';

export function SessionsPage(props: { onRefused: () => void }) {
  const [search, setSearch] = useState('');
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (query: string, after: string | null) => {
    const parameters = new URLSearchParams({ limit: '50', ...(query === '' ? {} : { search: query }), ...(after === null ? {} : { after }) });
    try {
      const page = await adminRequest<SessionPageResponse>(`/admin/dashboard/sessions?${parameters}`);
      setSessions((previous) => (after === null ? page.data : [...previous, ...page.data]));
      setNext(page.next);
      setError(null);
    } catch (caught) {
      if (caught instanceof AdminKeyRefused) props.onRefused();
      else setError(caught instanceof Error ? caught.message : String(caught));
    }
  };
  useEffect(() => {
    void load(search, null);
  }, [search]);

  return (
    <section>
      <form class="search" onSubmit={(event) => event.preventDefault()}>
        <input
          type="search"
          placeholder="Session id prefix, tenant or user"
          value={search}
          onInput={(event) => setSearch((event.target as HTMLInputElement).value.trim())}
        />
      </form>
      {error === null ? null : <p class="error">{error}</p>}
      <table class="list">
        <thead>
          <tr><th>session</th><th>tenant</th><th>user</th><th>status</th><th>main turns</th><th>side turns</th><th>started</th><th>last active</th></tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id}>
              <td><a href={`#/sessions/${encodeURIComponent(session.id)}`}>{session.id}</a></td>
              <td>{session.tenant ?? '–'}</td>
              <td>{session.user ?? '–'}</td>
              <td>{session.status}</td>
              <td>{session.mainTurns}</td>
              <td>{session.sideTurns}</td>
              <td>{formatTime(session.createdAt)}</td>
              <td>{formatTime(session.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {sessions.length === 0 ? <p class="muted">No sessions{search === '' ? ' yet' : ' match'}.</p> : null}
      {next === null ? null : <button type="button" onClick={() => void load(search, next)}>More sessions</button>}
    </section>
  );
}
