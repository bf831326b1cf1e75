/** Exponential back-off: `initialMs` before the first retry, doubling with each failed attempt, at most `maxMs`. */
export function retryDelayMs(attempts: number, retry: { initialMs: number; maxMs: number }): number {
  return Math.min(retry.maxMs, retry.initialMs * 2 ** Math.max(0, attempts - 1));
}
