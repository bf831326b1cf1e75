/**
 * Whether two JSON-shaped values (as `JSON.parse` and zod give them) serialize to the same
 * `JSON.stringify` text, found by walking both instead of serializing either: agents resend the
 * same tool schemas with every request, and serializing them to find out cost more than the walk.
 * Conservative: `true` only when the texts are certainly equal (same keys in the same order, equal
 * primitives); anything unusual (`undefined` against a missing key, a class instance) says `false`,
 * and the caller then serializes as before.
 */
export function isSameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) if (!isSameJson(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (let index = 0; index < aKeys.length; index += 1) {
    const key = aKeys[index] as string;
    if (key !== bKeys[index] || !isSameJson(a[key], b[key])) return false;
  }
  return true;
}

/** An object `JSON.stringify` writes member by member (no `toJSON`, no class of its own). */
function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
