/** A single-consumer queue bridging pushed messages to an async iterator. */
export class AsyncEventQueue<Item> {
  readonly #items: Item[] = [];
  #waiting: ((result: IteratorResult<Item>) => void) | undefined;
  #failure: unknown;
  #ended = false;

  push(item: Item): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting({ value: item, done: false });
    } else this.#items.push(item);
  }

  end(failure?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined && failure === undefined) waiting({ value: undefined, done: true });
    else if (waiting !== undefined) this.#rejectWaiting?.(failure);
  }

  #rejectWaiting: ((reason: unknown) => void) | undefined;

  next(): Promise<IteratorResult<Item>> {
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.#ended) {
      return this.#failure === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.#failure);
    }
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#rejectWaiting = reject;
    });
  }
}
