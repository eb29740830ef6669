/** The bench's figures as markdown, for the terminal and for pasting into docs/benchmarks.md. */
import type { MachineInfo } from '../src/loadtest/machine.ts';
import type { Spread } from './stats.ts';
import type { ScenarioResult } from './throughput.ts';

const MIB = 1024 * 1024;

function whole(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

function withRange(s: Spread, format: (n: number) => string): string {
  return `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

export function mib(bytes: number | null): string {
  return bytes === null ? 'n/a' : `${(bytes / MIB).toFixed(0)} MiB`;
}

export function machineLine(machine: MachineInfo): string {
  return `${machine.cpus} × ${machine.cpuModel}, ${(machine.memoryBytes / 1024 ** 3).toFixed(0)} GiB, Node ${machine.node}, ${machine.platform}`;
}

export function scenarioTable(scenarios: readonly ScenarioResult[]): string {
  const rows = scenarios.map((s) =>
    [
      s.label,
      withRange(s.requestsPerSecond, whole),
      s.id.startsWith('bare') ? '1.00' : withRange(s.rpsVsBare, (n) => fixed(n, 2)),
      fixed(s.p50Ms.median, 2),
      withRange(s.p99Ms, (n) => fixed(n, 2)),
      s.id.startsWith('bare') ? '1.00' : fixed(s.p99VsBare.median, 2),
      fixed(s.tailShape.median, 2),
      fixed(s.serverCpuUs.median, 1),
      s.gcPausesPerRun === null || s.gcMsPerRun === null ? '—' : `${whole(s.gcPausesPerRun.median)} (${fixed(s.gcMsPerRun.median, 1)} ms)`,
      s.runsWithFullGc === null ? '—' : `${s.runsWithFullGc} of ${s.runs.length}`,
      s.originCallsPerRun.max === 0 ? '0' : withRange(s.originCallsPerRun, whole),
      s.non2xx + s.errors === 0 ? '0' : `${s.non2xx} / ${s.errors}`,
    ].join(' | '),
  );
  return [
    '| scenario | req/s median (min–max) | × bare req/s | p50 ms | p99 ms median (min–max) | p99 × bare | p99 ÷ p50 | server CPU µs/req | GC pauses per run (total) | runs with a full GC | origin calls per run | non-2xx / errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}
