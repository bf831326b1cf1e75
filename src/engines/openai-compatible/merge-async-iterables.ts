/**
 * Yields items from several async iterables as they arrive. When the consumer stops or one
 * source throws, the others are closed (their pending reads are left to settle unobserved,
 * so callers must also cancel the sources' I/O, e.g. with an abort signal).
 */
export async function* mergeAsyncIterables<T>(sources: AsyncIterable<T>[]): AsyncGenerator<T> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<T> }>>();
  const pull = (index: number): void => {
    const iterator = iterators[index];
    if (iterator === undefined) return;
    const next = iterator.next().then((result) => ({ index, result }));
    // Marks the promise handled: a read still pending when we stop must not crash the process.
    next.catch(() => undefined);
    pending.set(index, next);
  };
  iterators.forEach((_, index) => pull(index));
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      if (result.done) {
        pending.delete(index);
        continue;
      }
      pull(index);
      yield result.value;
    }
  } finally {
    for (const index of pending.keys()) void iterators[index]?.return?.(undefined)?.catch(() => undefined);
  }
}
