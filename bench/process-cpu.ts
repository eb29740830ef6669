/**
 * A server's own CPU time, read from /proc (every thread of the process, user and system), and
 * pinning a process with all its threads to one core: the bench keeps servers on one core and
 * the load generator on the other, so neither steals the other's time.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Seconds of CPU the process has used so far (utime + stime). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Where servers and the generator run: different cores where there are two, else unpinned. */
export const CORES = availableParallelism() >= 2 ? { server: 1, generator: 0 } : undefined;

/** Pins the process and all of its threads (libuv's pool, V8's helpers) to `cpu`. */
export function pin(pid: number, cpu: number | undefined): void {
  if (cpu !== undefined) execFileSync('taskset', ['-a', '-c', '-p', String(cpu), String(pid)], { stdio: 'ignore' });
}
