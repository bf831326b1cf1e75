import { describe, expect, it } from 'vitest';
import { processCpuMs, runNanosecondsOfSchedstat } from './process-cpu-time.js';

describe('processCpuMs', () => {
  it('reads the run time, the first field of a schedstat line, in nanoseconds', () => {
    expect(runNanosecondsOfSchedstat('495335 1994853 2\n')).toBe(495335);
  });

  it.runIf(process.platform === 'linux')('grows with the work a process does, and is null for a process that is not there', () => {
    const before = processCpuMs(process.pid);
    let sum = 0;
    for (let index = 0; index < 5_000_000; index += 1) sum += index % 7;
    const after = processCpuMs(process.pid);
    expect(sum).toBeGreaterThan(0);
    expect(before).not.toBeNull();
    expect(after).toBeGreaterThan(before ?? Number.POSITIVE_INFINITY);
    expect(processCpuMs(2 ** 30)).toBeNull();
  });
});
