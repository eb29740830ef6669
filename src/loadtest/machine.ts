/** The machine a figure was measured on, recorded next to every result so figures are never compared blind. */
import { cpus, platform, release, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryBytes: number;
  readonly node: string;
  readonly platform: string;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${platform()} ${release()}`,
  };
}
