/**
 * An erasure of a period (`--retain-days`, `--before`) in batches of turns, with the event loop let
 * go between them: the SQLite store runs on the server's event loop, so a first retention run over
 * a large old store must not be one long transaction that holds every request meanwhile. A session
 * or tenant erasure is one batch (one transaction), as before. The batches' receipts make one.
 */
import type { ErasedCounts, ErasureResult, ErasureTarget } from '../spec/record-erasure.js';

const ascendingUnion = (first: readonly number[], second: readonly number[]): number[] => [...new Set([...first, ...second])].sort((a, b) => a - b);

/** One receipt for two batches: the counts summed, the versions and ids of both. */
export function mergeErasureResults(first: ErasureResult, second: ErasureResult): ErasureResult {
  const erased = Object.fromEntries(
    Object.entries(first.receipt.erased).map(([name, count]) => [name, count + second.receipt.erased[name as keyof ErasedCounts]]),
  ) as unknown as ErasedCounts;
  return {
    receipt: {
      ...first.receipt,
      erased,
      trainedOnErased: ascendingUnion(first.receipt.trainedOnErased, second.receipt.trainedOnErased),
      affectedVersions: ascendingUnion(first.receipt.affectedVersions, second.receipt.affectedVersions),
    },
    sessionIds: [...new Set([...first.sessionIds, ...second.sessionIds])],
    turnIds: [...first.turnIds, ...second.turnIds],
    sampleIds: [...first.sampleIds, ...second.sampleIds],
  };
}

/**
 * Runs `eraseBatch` (which erases at most `batchTurns` turns of a period) until a batch takes fewer;
 * any other target once.
 */
export async function eraseInBatches(target: ErasureTarget, batchTurns: number, eraseBatch: () => Promise<ErasureResult>): Promise<ErasureResult> {
  let batch = await eraseBatch();
  let result = batch;
  while (target.kind === 'before' && batch.turnIds.length >= batchTurns) {
    await new Promise((resolve) => setImmediate(resolve));
    batch = await eraseBatch();
    result = mergeErasureResults(result, batch);
  }
  return result;
}
