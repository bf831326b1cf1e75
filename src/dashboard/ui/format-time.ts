/** Epoch milliseconds as a local date and time, to the second. */
export function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}
