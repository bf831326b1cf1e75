/**
 * Users: everyone the server knows of (from sessions or memory) with their counts, and a user's
 * memory (`docs/memory.md`): the entries it is served with or taught with, each editable and
 * deletable, and a form to add a note. A tenant's key sees and edits its own users only.
 */
import { useEffect, useState } from 'preact/hooks';
import type { MemoryEntryRecord, RememberResponse, UserMemoryResponse, UsersResponse, UserSummary } from '../../gateway/admin/dashboard-api.js';
import { AdminKeyRefused, adminRequest } from './admin-client.js';
import { formatTime } from './format-time.js';

const memoryPath = (user: string) => `/admin/users/${encodeURIComponent(user)}/memory`;

export function UsersPage(props: { onRefused: () => void }) {
  const [users, setUsers] = useState<UserSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    adminRequest<UsersResponse>('/admin/users').then(
      (response) => setUsers(response.data),
      (caught: unknown) => (caught instanceof AdminKeyRefused ? props.onRefused() : setError(caught instanceof Error ? caught.message : String(caught))),
    );
  }, []);
  return (
    <section>
      {error === null ? null : <p class="error">{error}</p>}
      <table class="list" data-testid="users">
        <thead>
          <tr><th>user</th><th>sessions</th><th>turns</th><th>feedback</th><th>memory entries</th><th>last seen</th></tr>
        </thead>
        <tbody>
          {(users ?? []).map((user) => (
            <tr key={user.user} data-user={user.user}>
              <td><a href={`#/users/${encodeURIComponent(user.user)}`}>{user.user}</a></td>
              <td>{user.sessions}</td>
              <td>{user.turns}</td>
              <td>{user.feedback}</td>
              <td>{user.memoryEntries}</td>
              <td>{user.lastSeenAt === 0 ? '–' : formatTime(user.lastSeenAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {users !== null && users.length === 0 ? <p class="muted">No users yet: keys that name users (tenant/user=key) bring them.</p> : null}
    </section>
  );
}

function MemoryEntry(props: { entry: MemoryEntryRecord; onEdit: (text: string) => Promise<void>; onDelete: () => Promise<void> }) {
  const { entry } = props;
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <li class="memory-entry" data-entry-id={entry.id}>
      <span class="badge">{entry.kind}</span>{' '}
      {editing === null ? (
        <>
          <span data-testid="memory-text">{entry.text}</span>{' '}
          <span class="muted">
            · {formatTime(entry.updatedAt)}
            {entry.sourceTurnId === null ? null : <> · from <a href={`#/turns/${encodeURIComponent(entry.sourceTurnId)}`}>{entry.sourceTurnId}</a></>}
          </span>{' '}
          <button type="button" onClick={() => setEditing(entry.text)}>Edit</button>{' '}
          <button type="button" class="danger" onClick={() => void props.onDelete()}>Delete</button>
        </>
      ) : (
        <form
          class="memory-edit"
          onSubmit={(event) => {
            event.preventDefault();
            void props.onEdit(editing).then(() => setEditing(null));
          }}
        >
          <input type="text" name="memory-text" aria-label="Entry text" value={editing} onInput={(event) => setEditing((event.target as HTMLInputElement).value)} />{' '}
          <button type="submit">Save</button> <button type="button" onClick={() => setEditing(null)}>Cancel</button>
        </form>
      )}
    </li>
  );
}

export function UserMemoryPage(props: { user: string; onRefused: () => void }) {
  const [memory, setMemory] = useState<UserMemoryResponse | null>(null);
  const [note, setNote] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const fail = (caught: unknown) => (caught instanceof AdminKeyRefused ? props.onRefused() : setMessage(caught instanceof Error ? caught.message : String(caught)));
  const load = async () => {
    try {
      setMemory(await adminRequest<UserMemoryResponse>(memoryPath(props.user)));
    } catch (caught) {
      fail(caught);
    }
  };
  useEffect(() => {
    void load();
  }, [props.user]);
  const change = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setMessage(done);
      await load();
    } catch (caught) {
      fail(caught);
    }
  };
  const entries = memory?.data ?? [];
  return (
    <section>
      <h2>Memory of {props.user}</h2>
      <p class="muted" data-testid="memory-mode">
        {memory === null ? '' : memory.mode === 'off' ? 'The server runs with --user-memory off: this memory is kept but not used.'
          : `--user-memory ${memory.mode}: at most ${memory.maximumEntries} entries; adding past it drops the least recently written.`}
      </p>
      {message === null ? null : <p class="notice" data-testid="memory-message">{message}</p>}
      <ol class="memory" data-testid="memory-entries">
        {entries.map((entry) => (
          <MemoryEntry
            key={entry.id}
            entry={entry}
            onEdit={(text) => change(() => adminRequest(`${memoryPath(props.user)}/${entry.id}`, { method: 'PATCH', body: { text } }), 'Entry saved.')}
            onDelete={() => change(() => adminRequest(`${memoryPath(props.user)}/${entry.id}`, { method: 'DELETE' }), 'Entry deleted.')}
          />
        ))}
      </ol>
      {memory !== null && entries.length === 0 ? <p class="muted">Nothing remembered yet: the user's feedback and the hints the judge accepts add entries.</p> : null}
      <form
        class="memory-add"
        onSubmit={(event) => {
          event.preventDefault();
          void change(async () => {
            const added = await adminRequest<RememberResponse>(memoryPath(props.user), { method: 'POST', body: { text: note, kind: 'note' } });
            if (added.outcome === 'added') setNote('');
          }, 'Note kept.');
        }}
      >
        <input type="text" name="memory-note" aria-label="New note" placeholder="Something to remember about this user" value={note} onInput={(event) => setNote((event.target as HTMLInputElement).value)} />{' '}
        <button type="submit">Add note</button>
      </form>
    </section>
  );
}
