/**
 * How the disk tier's two candidate engines behave when things go wrong (issue 57, "Faults and
 * bad state"), each probe in child processes so that a crash is an outcome, not the end of the run:
 *
 *   node bench/disk-engine-faults.ts [--engines sqlite,lmdb-async,lmdb-sync] [--trials N, default 20] [--tmpfs]
 *
 * - kill -9 while writing: a child writes batches of 64 until SIGKILLed; the store is then opened
 *   and every entry written is either absent or byte-for-byte what was written, and every batch
 *   the child saw committed is there whole.
 * - not a store: the store's file replaced by random bytes, then opened.
 * - a damaged page: N trials, each overwriting one random 4 KiB page of a closed 2,000-entry
 *   store with random bytes, then reading every entry: detected (an error), silently wrong
 *   bytes, a crash (signal), or no effect.
 * - disk full (`--tmpfs`, needs root): the store on a 24 MiB tmpfs beside an 8 MiB ballast file,
 *   written until a write fails; then reads, the ballast removed, one more write, reopen.
 * Prints what happened and writes the JSON to bench/results/disk-engine-faults-<date>.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo } from '../src/loadtest/machine.ts';
import { ENGINE_NAMES, openEngine, type DiskEngine, type EngineName } from './disk-engine-stores.ts';
import { entryKey, makeEntry } from './disk-engines.ts';
import { saveResults } from './results-file.ts';

const BATCH = 64;
const VALUE_BYTES = 2000;
const PAGE = 4096;
const SELF = fileURLToPath(import.meta.url);

/** The engine's one data file: the file the probes damage or replace. */
function dataFile(name: EngineName, dir: string): string {
  return name.startsWith('sqlite') ? join(dir, 'cache.sqlite') : join(dir, 'lmdb');
}

function errorText(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return `${typeof code === 'string' ? `${code}: ` : ''}${message.split('\n')[0] ?? ''}`;
}

/** Every entry of 0..count-1: intact, absent, wrong bytes, or a read that threw. */
function checkEntries(
  engine: DiskEngine,
  count: number,
): { intact: number; absent: number; wrong: number; errors: number; firstError?: string; absentIndices: number[] } {
  const tally: { intact: number; absent: number; wrong: number; errors: number; firstError?: string; absentIndices: number[] } = {
    intact: 0,
    absent: 0,
    wrong: 0,
    errors: 0,
    absentIndices: [],
  };
  for (let i = 0; i < count; i += 1) {
    try {
      const value = engine.get(entryKey(i));
      if (value === undefined) {
        tally.absent += 1;
        tally.absentIndices.push(i);
      } else if (Buffer.compare(Buffer.from(value), Buffer.from(makeEntry(i, VALUE_BYTES).value)) === 0) tally.intact += 1;
      else tally.wrong += 1;
    } catch (err) {
      tally.errors += 1;
      tally.firstError ??= errorText(err);
    }
  }
  return tally;
}

async function fill(engine: DiskEngine, from: number, count: number): Promise<void> {
  let pending: Promise<unknown> | undefined;
  for (let first = from; first < from + count; first += BATCH) {
    pending = engine.write(Array.from({ length: Math.min(BATCH, from + count - first) }, (_, k) => makeEntry(first + k, VALUE_BYTES))) ?? pending;
  }
  await pending;
}

/** Child: write batches until killed, printing each batch's number once it is committed. */
async function writerChild(name: EngineName, dir: string): Promise<void> {
  const engine = openEngine(name, dir);
  for (let batch = 0; ; batch += 1) {
    const done = engine.write(Array.from({ length: BATCH }, (_, k) => makeEntry(batch * BATCH + k, VALUE_BYTES)));
    if (done === undefined) process.stdout.write(`${batch}\n`);
    else void done.then(() => process.stdout.write(`${batch}\n`));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Child: open the store, read entries 0..count-1, print the tally as JSON. */
function checkChild(name: EngineName, dir: string, count: number): void {
  let engine: DiskEngine;
  try {
    engine = openEngine(name, dir);
  } catch (err) {
    process.stdout.write(JSON.stringify({ openError: errorText(err) }));
    return;
  }
  const tally = checkEntries(engine, count);
  engine.close();
  process.stdout.write(JSON.stringify(tally));
}

interface CheckResult {
  readonly openError?: string;
  readonly intact?: number;
  readonly absent?: number;
  readonly wrong?: number;
  readonly errors?: number;
  readonly firstError?: string;
  readonly absentIndices?: readonly number[];
  readonly signal?: string;
  readonly stderr?: string;
}

function runCheck(name: EngineName, dir: string, count: number): CheckResult {
  const child = spawnSync(process.execPath, [SELF, '--check', name, dir, String(count)], { encoding: 'utf8', timeout: 60_000 });
  if (child.signal !== null) return { signal: child.signal, stderr: child.stderr.slice(0, 300) };
  try {
    return JSON.parse(child.stdout) as CheckResult;
  } catch {
    return { openError: `exit ${child.status ?? '?'}: ${child.stderr.split('\n').find((line) => line.trim() !== '') ?? ''}`.slice(0, 300) };
  }
}

async function killDuringWrites(name: EngineName): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), `faults-kill-${name}-`));
  try {
    const child = spawn(process.execPath, [SELF, '--writer', name, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let lastCommitted = -1;
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const lines = text.split('\n');
      text = lines.pop() ?? '';
      for (const line of lines) lastCommitted = Math.max(lastCommitted, Number(line));
    });
    // Killed at a moment unrelated to its batches, once it has written a few hundred (or after 5 s).
    const deadline = performance.now() + 5000;
    while (lastCommitted < 200 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 137));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const seen = lastCommitted;
    const written = (seen + 1000) * BATCH;
    const result = runCheck(name, dir, written);
    const committedPrefix = (seen + 1) * BATCH;
    const missingCommitted = (result.absentIndices ?? []).filter((i) => i < committedPrefix).length;
    const present = (result.intact ?? 0) + (result.wrong ?? 0);
    const absentPerBatch = new Map<number, number>();
    for (const i of result.absentIndices ?? []) absentPerBatch.set(Math.floor(i / BATCH), (absentPerBatch.get(Math.floor(i / BATCH)) ?? 0) + 1);
    const partlyThere = [...absentPerBatch.values()].filter((absent) => absent < BATCH).length;
    return {
      batchesSeenCommitted: seen + 1,
      entriesFound: present,
      wrongBytes: result.wrong ?? null,
      readErrors: result.errors ?? null,
      committedButMissing: missingCommitted,
      batchesPartlyThere: partlyThere,
      ...(result.openError === undefined ? {} : { openError: result.openError }),
      ...(result.signal === undefined ? {} : { signal: result.signal }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function notAStore(name: EngineName): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), `faults-garbage-${name}-`));
  try {
    const file = dataFile(name, dir);
    const garbage = Buffer.alloc(64 * 1024);
    for (let i = 0; i < garbage.length; i += 1) garbage[i] = (i * 2654435761) >>> 24;
    if (name.startsWith('sqlite')) writeFileSync(file, garbage);
    else {
      mkdirSync(file);
      writeFileSync(join(file, 'data.mdb'), garbage);
    }
    const result = runCheck(name, dir, 10);
    return { ...result, absentIndices: undefined };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function damagedPage(name: EngineName, trials: number): Promise<Record<string, unknown>> {
  const entries = 2000;
  const outcomes = { detected: 0, silentlyWrong: 0, crashed: 0, lostEntriesOnly: 0, noEffect: 0 };
  const examples: string[] = [];
  for (let trial = 0; trial < trials; trial += 1) {
    const dir = mkdtempSync(join(tmpdir(), `faults-page-${name}-`));
    try {
      const engine = openEngine(name, dir);
      await fill(engine, 0, entries);
      engine.close();
      const file = name.startsWith('sqlite') ? dataFile(name, dir) : join(dataFile(name, dir), 'data.mdb');
      const pages = Math.floor(statSync(file).size / PAGE);
      const page = 2 + ((trial * 7919 + 13) % Math.max(1, pages - 2));
      const noise = Buffer.alloc(PAGE);
      for (let i = 0; i < PAGE; i += 1) noise[i] = ((i + 1) * (trial + 3) * 2654435761) >>> 24;
      const fd = openSync(file, 'r+');
      writeSync(fd, noise, 0, PAGE, page * PAGE);
      closeSync(fd);
      const result = runCheck(name, dir, entries);
      if (result.signal !== undefined) {
        outcomes.crashed += 1;
        if (examples.length < 6) examples.push(`page ${page}: ${result.signal}`);
      } else if (result.openError !== undefined || (result.errors ?? 0) > 0) {
        outcomes.detected += 1;
        if (examples.length < 6) examples.push(`page ${page}: ${result.openError ?? result.firstError ?? ''}`);
      } else if ((result.wrong ?? 0) > 0) outcomes.silentlyWrong += 1;
      else if ((result.absent ?? 0) > 0) outcomes.lostEntriesOnly += 1;
      else outcomes.noEffect += 1;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { trials, ...outcomes, examples };
}

/** The store on a small tmpfs beside a ballast file: written until a write fails, then space comes back. */
function diskFull(name: EngineName): Record<string, unknown> {
  const mount = mkdtempSync(join(tmpdir(), `faults-full-${name}-`));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mount], { encoding: 'utf8' });
  if (mounted.status !== 0) return { skipped: `mount failed: ${mounted.stderr.trim()}` };
  try {
    const ballast = join(mount, 'ballast');
    writeFileSync(ballast, Buffer.alloc(8 * 2 ** 20, 1));
    const dir = join(mount, 'store');
    mkdirSync(dir);
    const child = spawnSync(process.execPath, [SELF, '--fill-until-full', name, dir, ballast], { encoding: 'utf8', timeout: 120_000 });
    if (child.signal !== null) return { signal: child.signal, stderr: child.stderr.slice(0, 300) };
    const report = JSON.parse(child.stdout || '{}') as Record<string, unknown>;
    const written = typeof report.entriesCommitted === 'number' ? report.entriesCommitted : 0;
    const reopened = runCheck(name, dir, written + BATCH * 2);
    return { ...report, reopened: { ...reopened, absentIndices: undefined } };
  } finally {
    spawnSync('umount', [mount]);
    rmSync(mount, { recursive: true, force: true });
  }
}

/**
 * lmdb rejects a failed queued commit with a generic error whose `commitError` is a second,
 * rejected promise holding the cause: left without a handler, that one ends the process.
 */
async function commitCause(err: unknown): Promise<unknown> {
  const cause = (err as { commitError?: unknown }).commitError;
  if (!(cause instanceof Promise)) return err;
  try {
    await cause;
    return err;
  } catch (inner) {
    return inner;
  }
}

/** Child of diskFull: write until a write fails, read, free the ballast, write again. */
async function fillUntilFullChild(name: EngineName, dir: string, ballast: string): Promise<void> {
  const engine = openEngine(name, dir);
  let committed = 0;
  let firstError: string | undefined;
  for (let batch = 0; batch < 2000 && firstError === undefined; batch += 1) {
    try {
      await engine.write(Array.from({ length: BATCH }, (_, k) => makeEntry(batch * BATCH + k, VALUE_BYTES)));
      committed = (batch + 1) * BATCH;
    } catch (err) {
      firstError = errorText(await commitCause(err));
    }
  }
  const afterFull = checkEntries(engine, Math.min(committed, 500));
  rmSync(ballast);
  let writeAfterSpace: string;
  try {
    await engine.write(Array.from({ length: BATCH }, (_, k) => makeEntry(committed + k, VALUE_BYTES)));
    writeAfterSpace = 'ok';
    committed += BATCH;
  } catch (err) {
    writeAfterSpace = errorText(await commitCause(err));
  }
  const files = readdirSync(dir, { recursive: true }).length;
  engine.close();
  process.stdout.write(
    JSON.stringify({
      entriesCommitted: committed,
      firstError: firstError ?? 'none before 2,000 batches',
      readsAfterFull: { intact: afterFull.intact, errors: afterFull.errors, firstError: afterFull.firstError },
      writeAfterSpace,
      files,
    }),
  );
}

async function main(argv: readonly string[]): Promise<void> {
  const [mode, engineArg, dir, extra] = argv;
  const name = engineArg as EngineName;
  if (mode === '--writer') return writerChild(name, dir ?? '');
  if (mode === '--check') {
    checkChild(name, dir ?? '', Number(extra));
    return;
  }
  if (mode === '--fill-until-full') return fillUntilFullChild(name, dir ?? '', extra ?? '');
  const { values } = parseArgs({
    args: [...argv],
    options: {
      engines: { type: 'string', default: ['sqlite', 'lmdb-async', 'lmdb-sync'].join(',') },
      trials: { type: 'string', default: '20' },
      tmpfs: { type: 'boolean', default: false },
      'no-save': { type: 'boolean', default: false },
    },
  });
  const names = values.engines.split(',') as EngineName[];
  for (const engine of names) if (!ENGINE_NAMES.includes(engine)) throw new Error(`unknown engine ${engine}`);
  const startedAt = new Date().toISOString();
  const results: Record<string, Record<string, unknown>> = {};
  for (const engine of names) {
    process.stderr.write(`disk-engine-faults: ${engine}\n`);
    results[engine] = {
      killDuringWrites: await killDuringWrites(engine),
      notAStore: notAStore(engine),
      damagedPage: await damagedPage(engine, Number(values.trials)),
      ...(values.tmpfs ? { diskFull: diskFull(engine) } : {}),
    };
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  const report = { startedAt, command: ['node bench/disk-engine-faults.ts', ...argv].join(' '), machine: machineInfo(), results };
  if (!values['no-save'])
    process.stderr.write(`saved ${saveResults('disk-engine-faults-latest.json', 'disk-engine-faults', startedAt, report, true).join(', ')}\n`);
}

await main(process.argv.slice(2));
