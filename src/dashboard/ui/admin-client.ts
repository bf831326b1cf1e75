/**
 * Requests to the admin routes with the admin key of this tab. The key lives in sessionStorage: it
 * survives a reload of the tab and leaves with it. Without keys on the server (loopback only) the
 * routes answer without one.
 */
const keyName = 'clawrl-admin-key';

/** The server refused the key (or wants one): the page shows the login form. */
export class AdminKeyRefused extends Error {}

/**
 * The server knows the key but the route needs the admin key (a tenant's key on policies, training
 * or experiments): the page says so and the tab stays signed in, since the tenant's pages still work.
 */
export class NeedsAdminKey extends Error {
  constructor() {
    super('This page needs the admin key; a tenant\'s key reads its own sessions and turns only.');
  }
}

export function storedAdminKey(): string | null {
  return sessionStorage.getItem(keyName);
}

export function storeAdminKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(keyName);
  else sessionStorage.setItem(keyName, key);
}

/** `body`, when given, is sent as JSON. */
export async function adminRequest<T>(path: string, init: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown } = {}): Promise<T> {
  const key = storedAdminKey();
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  if (response.status === 401) throw new AdminKeyRefused(await errorMessageOf(response));
  if (response.status === 403) throw new NeedsAdminKey();
  if (!response.ok) throw new Error(await errorMessageOf(response));
  return (await response.json()) as T;
}

async function errorMessageOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: string } };
    return body.error?.message ?? `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}
