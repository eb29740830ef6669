/**
 * A server's own CPU time, read from /proc (every thread of the process and of its children:
 * the gateway's workers, nginx's), and pinning a server with all its processes and threads to
 * cores: the bench keeps single-process servers on one core and the load generator on the other,
 * so neither steals the other's time.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** The process and its descendants, from each thread's `children` list. */
function processTree(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (listed !== '') children.push(...listed.split(' ').map(Number));
    }
  } catch {
    return [];
  }
  return [pid, ...children.flatMap(processTree)];
}

function ownCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Seconds of CPU the server has used so far (utime + stime), its child processes included. */
export function cpuSeconds(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + ownCpuSeconds(p), 0);
}

/** Where servers and the generator run: different cores where there are two, else unpinned. */
export const CORES = availableParallelism() >= 2 ? { server: 1, generator: 0 } : undefined;

/** Pins the server, its child processes and all their threads (libuv's pool, V8's helpers) to `cpus` (`1`, `0,1`). */
export function pin(pid: number, cpus: number | string | undefined): void {
  if (cpus === undefined) return;
  for (const p of processTree(pid)) execFileSync('taskset', ['-a', '-c', '-p', String(cpus), String(p)], { stdio: 'ignore' });
}

/** Every core, for servers of several processes: on two cores they share one with the load generator. */
export const ALL_CORES = availableParallelism() >= 2 ? `0-${availableParallelism() - 1}` : undefined;
