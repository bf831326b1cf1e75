/**
 * CPU time another process has used, user and system, in milliseconds: what the benchmark
 * divides by the turns a target served. CPU time, unlike latency, barely moves when other
 * processes compete for the machine's cores. Read from `/proc/<pid>/stat`, so Linux only;
 * elsewhere the figures are null.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User plus system CPU of fields 14 and 15 of a `/proc/<pid>/stat` line, in clock ticks. */
export function cpuTicksOfStat(stat: string): number {
  // The command name (field 2) is in parentheses and may hold spaces; fields after it split plainly.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The process's CPU time so far, or null where `/proc` is not there to read. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return (cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1000) / clockTicksPerSecond();
  } catch {
    return null;
  }
}
