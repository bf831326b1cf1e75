/**
 * JSON with object keys sorted at every level, so two equal values always give the same text
 * (and the same hash) whatever order their producer wrote the keys in. `undefined` members are
 * dropped, as `JSON.stringify` does, which matches how optional fields read back.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
}
