/**
 * A small deterministic pseudo-random generator (mulberry32) for pure code: the corpus generator,
 * simulated users and anything else that must replay exactly from a seed. Not for security.
 */

export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both ends included. */
  integer(min: number, max: number): number;
  /** One element, uniformly. Throws `RangeError` on an empty array (a programming error). */
  pick<T>(array: readonly T[]): T;
  /** One element with probability proportional to its weight. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T;
  /** A shuffled copy (Fisher-Yates); the input is left untouched. */
  shuffle<T>(array: readonly T[]): T[];
  /** True with probability `probability`. */
  chance(probability: number): boolean;
  /** A standard normal draw (Box-Muller), for weight initialisation. */
  nextNormal(): number;
}

const fnvOffset = 0x811c9dc5;
const fnvPrime = 0x01000193;

function mixInteger(hash: number, value: number): number {
  let mixed = hash;
  for (let shift = 0; shift < 32; shift += 8) {
    mixed = Math.imul(mixed ^ ((value >>> shift) & 0xff), fnvPrime);
  }
  return mixed >>> 0;
}

function mixPart(hash: number, part: string | number): number {
  if (typeof part === 'string') {
    // A tag keeps the string "1" and the number 1 from deriving the same seed.
    let mixed = mixInteger(hash, 0x5354);
    for (let index = 0; index < part.length; index += 1) {
      mixed = mixInteger(mixed, part.charCodeAt(index));
    }
    return mixInteger(mixed, part.length);
  }
  if (!Number.isFinite(part)) throw new RangeError(`seed parts must be finite numbers, got ${part}`);
  const whole = Math.trunc(part);
  const low = whole >>> 0;
  const high = Math.floor(whole / 0x1_0000_0000) >>> 0;
  return mixInteger(mixInteger(mixInteger(hash, 0x4e55), low), high);
}

/**
 * A 32-bit seed from a seed and any number of labels, so independent streams (one per corpus
 * example, one per simulated session) can be derived without advancing a shared generator.
 */
export function deriveSeed(seed: string | number, ...parts: readonly (string | number)[]): number {
  let hash = mixPart(fnvOffset, seed);
  for (const part of parts) hash = mixPart(hash, part);
  return hash;
}

/**
 * A derived seed for a sampling request (`seed` of the OpenAI API, the engines' samplers): kept
 * below 2^31 − 1, since the API's integers and some engines take signed 32-bit seeds.
 */
export function deriveSamplingSeed(seed: string | number, ...parts: readonly (string | number)[]): number {
  return deriveSeed(seed, ...parts) % 2_147_483_647;
}

export function createSeededRandom(seed: string | number): SeededRandom {
  let state = deriveSeed(seed);

  function next(): number {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  function integer(min: number, max: number): number {
    if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) {
      throw new RangeError(`integer(${min}, ${max}) needs integers with min <= max`);
    }
    return min + Math.floor(next() * (max - min + 1));
  }

  function pick<T>(array: readonly T[]): T {
    if (array.length === 0) throw new RangeError('pick() from an empty array');
    return array[integer(0, array.length - 1)] as T;
  }

  function weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, weight]) => sum + Math.max(0, weight), 0);
    if (!(total > 0)) throw new RangeError('weighted() needs at least one positive weight');
    let remaining = next() * total;
    for (const [value, weight] of entries) {
      if (weight <= 0) continue;
      remaining -= weight;
      if (remaining < 0) return value;
    }
    // Floating-point rounding can leave a sliver of `remaining`; it belongs to the last entry.
    const last = [...entries].reverse().find(([, weight]) => weight > 0);
    return (last as readonly [T, number])[0];
  }

  function shuffle<T>(array: readonly T[]): T[] {
    const copy = [...array];
    for (let index = copy.length - 1; index > 0; index -= 1) {
      const other = integer(0, index);
      [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
    }
    return copy;
  }

  function chance(probability: number): boolean {
    return next() < probability;
  }

  function nextNormal(): number {
    const uniform = 1 - next();
    return Math.sqrt(-2 * Math.log(uniform)) * Math.cos(2 * Math.PI * next());
  }

  return { next, integer, pick, weighted, shuffle, chance, nextNormal };
}
