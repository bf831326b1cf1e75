/**
 * CPU time another process has used, in milliseconds: what the benchmark divides by the turns a
 * target served. CPU time, unlike latency or throughput, barely moves when other processes compete
 * for the machine's cores. Read from Linux's `/proc`, in nanoseconds, summed over the process's
 * threads (V8's garbage-collection helpers and the judge thread included; a thread that ended
 * between two reads is not counted); elsewhere the figures are null.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The run time (first field, nanoseconds) of a `/proc/<pid>/task/<tid>/schedstat` line. */
export function runNanosecondsOfSchedstat(schedstat: string): number {
  return Number(schedstat.split(' ', 1)[0]);
}

/** The process's CPU time so far, or null where `/proc` is not there to read. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    let nanoseconds = 0;
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        nanoseconds += runNanosecondsOfSchedstat(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8'));
      } catch {
        // The thread ended after the listing.
      }
    }
    return nanoseconds / 1e6;
  } catch {
    return null;
  }
}
