/**
 * Sizes and durations written with a unit (`256MiB`, `90s`, `1.5h`), for the keys whose name says
 * what they count: `…Bytes`, `…Ms`, `…Seconds`. A plain integer still means the key's own unit.
 * nginx and Varnish take `256m` / `90s`; the IEC and SI suffixes here leave no doubt which
 * megabyte is meant.
 */
import type { ConfigKey } from './schema.ts';

export type Unit = 'bytes' | 'ms' | 's';

const FACTORS: Readonly<Record<Unit, Readonly<Record<string, number>>>> = {
  bytes: { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 },
  ms: { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 },
  s: { s: 1, m: 60, h: 3600, d: 86_400 },
};

/** Largest first, for printing a value the way a person would write it. */
const PRINTED: Readonly<Record<Unit, readonly string[]>> = {
  bytes: ['TiB', 'GiB', 'MiB', 'KiB'],
  ms: ['d', 'h', 'm', 's'],
  s: ['d', 'h', 'm'],
};

export function unitOf(key: ConfigKey): Unit | undefined {
  if (key.endsWith('Bytes')) return 'bytes';
  if (key.endsWith('Ms')) return 'ms';
  if (key.endsWith('Seconds')) return 's';
  return undefined;
}

export function unitExamples(unit: Unit): string {
  return { bytes: '`512KiB`, `256MiB`, `1GB`', ms: '`250ms`, `90s`, `5m`', s: '`90s`, `5m`, `1h`, `1d`' }[unit];
}

/** The value in the key's own unit, or undefined when the text is not a whole number of it. */
export function parseQuantity(text: string, unit: Unit): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$/.exec(text.trim());
  if (match === null) return undefined;
  const factor = match[2] === '' ? 1 : FACTORS[unit][match[2] ?? ''];
  if (factor === undefined) return undefined;
  const value = Number(match[1]) * factor;
  return Number.isSafeInteger(value) ? value : undefined;
}

export function formatQuantity(value: number, unit: Unit): string {
  const suffix = PRINTED[unit].find((name) => value !== 0 && value % (FACTORS[unit][name] ?? 1) === 0);
  if (suffix !== undefined) return `${value / (FACTORS[unit][suffix] ?? 1)}${suffix}`;
  return unit === 'bytes' ? String(value) : `${value}${unit}`;
}
