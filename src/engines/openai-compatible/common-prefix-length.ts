/**
 * How many leading characters two strings share, found with string equality only: V8 compares
 * two flat strings with a memory comparison (75 KB in about 1.4 µs), while a `charCodeAt` loop
 * or `startsWith` walks them character by character (30–100 times as long). One comparison of
 * the whole shorter length settles the common case (one string extends the other); otherwise a
 * binary search compares ever shorter slices, about the length of the strings in all.
 */
export function commonPrefixLength(first: string, second: string): number {
  const limit = Math.min(first.length, second.length);
  if (first.slice(0, limit) === second.slice(0, limit)) return limit;
  // Invariant: the first `low` characters are equal, the first `high` are not.
  let low = 0;
  let high = limit;
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    if (first.slice(low, middle) === second.slice(low, middle)) low = middle;
    else high = middle;
  }
  return low;
}
