/**
 * The dashboard's shell: the key login, the page navigation (hash routes, so the server serves one
 * page at `/`) and the pages. A tenant's key signs in too (its users' memory included): its nav leaves out the pages that need
 * the admin key (which, reached by their address, say so).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AdminKeyRefused, adminRequest, storeAdminKey, storedAdminKey } from './admin-client.js';
import './dashboard.css';
import { ExperimentsPage } from './experiments-page.js';
import { OverviewPage } from './overview-page.js';
import { PoliciesPage } from './policies-page.js';
import { SessionPage } from './session-page.js';
import { SessionsPage } from './sessions-page.js';
import { TurnPage } from './turn-page.js';
import { UserMemoryPage, UsersPage } from './users-page.js';

/** `tenant`: the tenant whose key this tab holds; null for the admin key (or a server without keys). */
type Access = { kind: 'checking' } | { kind: 'login'; refused: string | null } | { kind: 'ready'; tenant: string | null };

/** `/admin/status` names the tenant when the key is a tenant's. */
async function signedInTenant(): Promise<string | null> {
  const status = await adminRequest<{ tenant?: unknown }>('/admin/status');
  return typeof status.tenant === 'string' ? status.tenant : null;
}

function currentRoute(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent).filter((part) => part !== '');
}

function LoginForm(props: { refused: string | null; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <form
      class="login"
      onSubmit={(event) => {
        event.preventDefault();
        props.onKey(key);
      }}
    >
      <h1>clawrl</h1>
      <label>
        Admin or tenant key <input type="password" name="admin-key" autocomplete="current-password" value={key} onInput={(event) => setKey((event.target as HTMLInputElement).value)} />
      </label>
      <button type="submit">Sign in</button>
      {props.refused === null ? null : <p class="error" data-testid="login-error">{props.refused}</p>}
      <p class="muted">The key is kept for this tab only.</p>
    </form>
  );
}

function App() {
  const [access, setAccess] = useState<Access>({ kind: 'checking' });
  const [route, setRoute] = useState(currentRoute());
  // Without keys on the server the admin routes answer at once; otherwise a key kept by this tab may do.
  const check = async () => {
    const hadKey = storedAdminKey() !== null;
    try {
      setAccess({ kind: 'ready', tenant: await signedInTenant() });
    } catch (error) {
      if (!(error instanceof AdminKeyRefused)) return setAccess({ kind: 'login', refused: error instanceof Error ? error.message : String(error) });
      storeAdminKey(null);
      setAccess({ kind: 'login', refused: hadKey ? 'The server refused the key; sign in again.' : null });
    }
  };
  useEffect(() => {
    void check();
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const signIn = async (key: string) => {
    storeAdminKey(key);
    try {
      setAccess({ kind: 'ready', tenant: await signedInTenant() });
    } catch (error) {
      storeAdminKey(null);
      setAccess({ kind: 'login', refused: error instanceof AdminKeyRefused ? 'The server refused this key.' : String(error) });
    }
  };
  const onRefused = () => {
    storeAdminKey(null);
    setAccess({ kind: 'login', refused: 'The server refused the key; sign in again.' });
  };

  if (access.kind === 'checking') return <p class="muted">Connecting…</p>;
  if (access.kind === 'login') return <LoginForm refused={access.refused} onKey={(key) => void signIn(key)} />;
  const [page = 'overview', id] = route;
  const allPages: [string, string][] = [['overview', 'Overview'], ['sessions', 'Sessions'], ['users', 'Users'], ['policies', 'Policies'], ['experiments', 'Experiments']];
  const pages = access.tenant === null ? allPages : allPages.filter(([name]) => name === 'overview' || name === 'sessions' || name === 'users');
  const section = page === 'turns' ? 'sessions' : page;
  return (
    <div class="shell">
      <nav>
        <span class="brand">clawrl</span>
        {pages.map(([name, label]) => (
          <a key={name} href={`#/${name}`} class={section === name ? 'current' : ''}>{label}</a>
        ))}
        {access.tenant === null ? null : <span class="tenant" data-testid="signed-in-tenant">tenant {access.tenant}</span>}
        {storedAdminKey() === null ? null : (
          <button type="button" class="sign-out" onClick={() => { storeAdminKey(null); setAccess({ kind: 'login', refused: null }); }}>Sign out</button>
        )}
      </nav>
      <main>
        {page === 'sessions' && id !== undefined ? <SessionPage sessionId={id} onRefused={onRefused} />
          : page === 'sessions' ? <SessionsPage onRefused={onRefused} />
          : page === 'turns' && id !== undefined ? <TurnPage turnId={id} onRefused={onRefused} />
          : page === 'users' && id !== undefined ? <UserMemoryPage user={id} onRefused={onRefused} />
          : page === 'users' ? <UsersPage onRefused={onRefused} />
          : page === 'policies' ? <PoliciesPage onRefused={onRefused} />
          : page === 'experiments' ? <ExperimentsPage onRefused={onRefused} />
          : <OverviewPage onRefused={onRefused} />}
      </main>
    </div>
  );
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
