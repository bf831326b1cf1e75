/**
 * What a command started, closed in reverse order: on shutdown, and when start-up fails half-way
 * (so a process that cannot start leaves no engine worker or connection behind). A failing step
 * is logged and the rest still close: the store, last, flushes whatever the others left.
 */
import type { Logger } from '../../spec/logger.js';

export interface ShutdownStack {
  /** Registers what closes a part that has started; returns the part. */
  add<Part>(part: Part, close: (part: Part) => Promise<void>): Part;
  /** Closes everything added, newest first. Idempotent. */
  close(): Promise<void>;
}

export function createShutdownStack(logger: Logger): ShutdownStack {
  const closers: Array<{ close: () => Promise<void> }> = [];
  let closing: Promise<void> | undefined;
  return {
    add(part, close) {
      closers.push({ close: () => close(part) });
      return part;
    },
    close() {
      closing ??= (async () => {
        for (const closer of closers.reverse()) {
          try {
            await closer.close();
          } catch (error) {
            logger.error('closing a part failed', { error: String(error) });
          }
        }
      })();
      return closing;
    },
  };
}
