/** Reads every 100 ms until `done` holds for what was read, and returns it; throws naming `what` after `attempts` reads. */
export async function pollUntil<Value>(read: () => Promise<Value>, done: (value: Value) => boolean, what: string, attempts = 600): Promise<Value> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
