/**
 * Compact binary forms of token ids and log-probs, and the prefix-sharing scheme for prompt ids.
 * Every record store uses the same forms, so data moves between stores byte for byte.
 *
 * Byte order is fixed to little-endian so a database file moves between machines unchanged.
 * Log-probs are stored as Float64 because every float64 (including -0, -Infinity and NaN payloads
 * that JSON would lose) must come back bit-for-bit: the trainer's importance ratio compares them.
 */
import { ClawrlError } from '../spec/clawrl-error.js';

const int32Bytes = 4;
const float64Bytes = 8;
const int32Minimum = -2_147_483_648;
const int32Maximum = 2_147_483_647;

export function encodeInt32Blob(values: readonly number[], field: string): Buffer {
  const blob = Buffer.allocUnsafe(values.length * int32Bytes);
  for (let position = 0; position < values.length; position += 1) {
    const value = values[position] as number;
    if (!Number.isInteger(value) || value < int32Minimum || value > int32Maximum) {
      throw new ClawrlError('store_error', `${field}[${position}] is not a 32-bit integer token id: ${value}`);
    }
    blob.writeInt32LE(value, position * int32Bytes);
  }
  return blob;
}

export function decodeInt32Blob(blob: Uint8Array): number[] {
  if (blob.byteLength % int32Bytes !== 0) {
    throw new ClawrlError('store_error', `corrupt token blob: ${blob.byteLength} bytes is not a multiple of 4`);
  }
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const values = new Array<number>(blob.byteLength / int32Bytes);
  for (let position = 0; position < values.length; position += 1) {
    values[position] = view.getInt32(position * int32Bytes, true);
  }
  return values;
}

export function encodeFloat64Blob(values: readonly number[], field: string): Buffer {
  const blob = Buffer.allocUnsafe(values.length * float64Bytes);
  for (let position = 0; position < values.length; position += 1) {
    const value = values[position];
    if (typeof value !== 'number') {
      throw new ClawrlError('store_error', `${field}[${position}] is not a number`);
    }
    blob.writeDoubleLE(value, position * float64Bytes);
  }
  return blob;
}

export function decodeFloat64Blob(blob: Uint8Array): number[] {
  if (blob.byteLength % float64Bytes !== 0) {
    throw new ClawrlError('store_error', `corrupt log-prob blob: ${blob.byteLength} bytes is not a multiple of 8`);
  }
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const values = new Array<number>(blob.byteLength / float64Bytes);
  for (let position = 0; position < values.length; position += 1) {
    values[position] = view.getFloat64(position * float64Bytes, true);
  }
  return values;
}

export function commonPrefixLength(left: ArrayLike<number>, right: ArrayLike<number>): number {
  const limit = Math.min(left.length, right.length);
  let length = 0;
  while (length < limit && left[length] === right[length]) length += 1;
  return length;
}

/**
 * One turn's stored prompt: the first `prefixLength` ids of its base turn's prompt+response
 * sequence, followed by `suffix`. The chain's first link has no base and `prefixLength` 0.
 */
export interface PromptLink {
  prefixLength: number;
  suffix: readonly number[];
  responseTokenIds: readonly number[];
}

/**
 * Rebuilds the last link's prompt ids from a base chain ordered oldest first. It walks the chain
 * backwards and writes every id exactly once into its final position, so rebuilding an 11k-token
 * prompt at the end of a long session costs its length, not its length times the chain's.
 */
export function reconstructPromptTokenIds(chain: readonly PromptLink[]): number[] {
  const last = chain[chain.length - 1];
  if (last === undefined) return [];
  const prompt = new Array<number>(last.prefixLength + last.suffix.length);
  const copy = (source: readonly number[], count: number, at: number) => {
    for (let position = 0; position < count; position += 1) prompt[at + position] = source[position] as number;
  };
  copy(last.suffix, last.suffix.length, last.prefixLength);
  // How many leading ids of the previous link's prompt+response sequence are still missing.
  let needed = last.prefixLength;
  for (let index = chain.length - 2; index >= 0 && needed > 0; index -= 1) {
    const link = chain[index] as PromptLink;
    const promptLength = link.prefixLength + link.suffix.length;
    if (needed > promptLength + link.responseTokenIds.length) {
      throw new ClawrlError(
        'store_error',
        `corrupt prompt chain: prefix of ${needed} ids exceeds the base sequence of ${promptLength + link.responseTokenIds.length}`,
      );
    }
    if (needed > promptLength) {
      copy(link.responseTokenIds, needed - promptLength, promptLength);
      needed = promptLength;
    }
    if (needed > link.prefixLength) {
      copy(link.suffix, needed - link.prefixLength, link.prefixLength);
      needed = link.prefixLength;
    }
  }
  if (needed > 0 || (chain[0]?.prefixLength ?? 0) !== 0) {
    throw new ClawrlError('store_error', 'corrupt prompt chain: the first link refers to a missing base turn');
  }
  return prompt;
}
