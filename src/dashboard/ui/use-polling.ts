/** Reads an admin route now and every `intervalMs` after, while the component is shown. */
import { useEffect, useState } from 'preact/hooks';
import { AdminKeyRefused, NeedsAdminKey, adminRequest } from './admin-client.js';

export interface Polled<T> {
  data: T | null;
  error: string | null;
  /** The route answered 403: this key may not read it, and asking again will not change that. */
  needsAdminKey: boolean;
}

export function usePolling<T>(path: string, intervalMs: number, onRefused: () => void, onData?: (data: T) => void): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: null, error: null, needsAdminKey: false });
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const data = await adminRequest<T>(path);
        if (stopped) return;
        onData?.(data);
        setState({ data, error: null, needsAdminKey: false });
      } catch (error) {
        if (stopped) return;
        if (error instanceof AdminKeyRefused) return onRefused();
        if (error instanceof NeedsAdminKey) return setState({ data: null, error: error.message, needsAdminKey: true });
        setState((previous) => ({ data: previous.data, error: String(error instanceof Error ? error.message : error), needsAdminKey: false }));
      }
      if (!stopped && intervalMs > 0) timer = setTimeout(read, intervalMs);
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [path, intervalMs]);
  return state;
}
