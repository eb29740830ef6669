/**
 * The log sink gathers lines in a block and writes it synchronously: lines must reach the file on
 * a quiet server, at exit, and when the process dies of an uncaught error; lines of several
 * processes sharing one pipe must stay whole; a destination that fails must not take the process
 * down.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { LogSink, reopenLogFiles } from '../../src/shared/log-sink.ts';
import { tempDir } from '../support/config.ts';

const SINK = pathToFileURL(join(import.meta.dirname, '../../src/shared/log-sink.ts')).href;

function line(writer: string, n: number): string {
  return `${JSON.stringify({ writer, n, pad: 'x'.repeat(200 + (n % 97)), text: 'é☃' })}\n`;
}

/** Runs a Node 24 child that makes a sink and runs `body` with it; resolves with its exit and output. */
function child(destination: string, body: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `import { LogSink } from ${JSON.stringify(SINK)};\nconst sink = new LogSink({ destination: ${JSON.stringify(destination)} });\n${body}`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  proc.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve) =>
    proc.on('close', (code) => {
      resolve({ code, stdout, stderr });
    }),
  );
}

test('a line reaches the file within flushEveryMs on a quiet server; a full block is written at once, whole lines only', async (t) => {
  const file = join(tempDir(), 'logs', 'a.log');
  const sink = new LogSink({ destination: file, blockBytes: 4096, flushEveryMs: 50 });
  t.after(() => {
    sink.close();
  });
  sink.write(line('a', 0));
  assert.equal(readFileSync(file, 'utf8'), '', 'gathered, not yet written');
  await sleep(200);
  assert.equal(readFileSync(file, 'utf8'), line('a', 0));
  for (let n = 1; n <= 40; n++) sink.write(line('a', n));
  const written = readFileSync(file, 'utf8');
  assert.ok(written.length > line('a', 0).length, 'blocks written as they filled');
  assert.ok(written.endsWith('\n'), 'no line cut at a block boundary');
  sink.flush();
  assert.deepEqual(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as { n: number }).n),
    Array.from({ length: 41 }, (_, n) => n),
  );
});

test('a line longer than the block is written whole, after what came before it', (t) => {
  const file = join(tempDir(), 'long.log');
  const sink = new LogSink({ destination: file, blockBytes: 1024 });
  t.after(() => {
    sink.close();
  });
  sink.write('short\n');
  const long = `${'☃'.repeat(2000)}\n`;
  sink.write(long);
  sink.write('after\n');
  sink.flush();
  assert.equal(readFileSync(file, 'utf8'), `short\n${long}after\n`);
});

test('deferred lines are made at the end of the turn, or before a line taken whole, in the order they came, with the time they came', async (t) => {
  const file = join(tempDir(), 'deferred.log');
  const sink = new LogSink({ destination: file });
  t.after(() => {
    sink.close();
  });
  const made: number[] = [];
  const make = (n: number, at: number): string => {
    made.push(n);
    return `${JSON.stringify({ n, at })}\n`;
  };
  const before = Date.now();
  sink.defer(1, make);
  sink.defer(2, make);
  assert.deepEqual(made, [], 'not made while the turn goes on');
  sink.write('{"whole":3}\n');
  assert.deepEqual(made, [1, 2], 'made before the line taken whole, so that it comes after them');
  sink.defer(4, make);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(made, [1, 2, 4], 'made once the turn is over');
  sink.defer(5, make);
  sink.flush();
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { n?: number; whole?: number; at?: number });
  assert.deepEqual(
    lines.map((l) => l.n ?? l.whole),
    [1, 2, 3, 4, 5],
    'a flush makes what is deferred first',
  );
  for (const l of lines) if (l.at !== undefined) assert.ok(l.at >= before && l.at <= Date.now(), 'the time the line was handed over');
});

test('a turn that defers many lines has them made as they fill the queue, none lost', (t) => {
  const file = join(tempDir(), 'many.log');
  const sink = new LogSink({ destination: file, blockBytes: 4096 });
  t.after(() => {
    sink.close();
  });
  let made = 0;
  for (let n = 0; n < 1000; n++)
    sink.defer(n, (i) => {
      made++;
      return `${i}\n`;
    });
  assert.ok(made >= 768, `made ${made} of 1,000 within the turn`);
  sink.flush();
  assert.deepEqual(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number),
    Array.from({ length: 1000 }, (_, n) => n),
  );
});

test('reopen writes what is gathered to the old file and goes on in a new one at the same path', (t) => {
  const file = join(tempDir(), 'rotated.log');
  const sink = new LogSink({ destination: file });
  t.after(() => {
    sink.close();
  });
  sink.write('before\n');
  renameSync(file, `${file}.1`);
  reopenLogFiles();
  sink.write('after\n');
  sink.flush();
  assert.equal(readFileSync(`${file}.1`, 'utf8'), 'before\n');
  assert.equal(readFileSync(file, 'utf8'), 'after\n');
});

test('lines gathered in memory, or deferred, reach the file when the process exits and when it dies of an uncaught error', async () => {
  const dir = tempDir();
  const exited = await child(
    join(dir, 'exit.log'),
    'for (let n = 0; n < 100; n++) sink.write(`exit ${n}\\n`);\nsink.defer(100, (n) => `deferred ${n}\\n`);\nprocess.exit(0);',
  );
  assert.equal(exited.code, 0, exited.stderr);
  const written = readFileSync(join(dir, 'exit.log'), 'utf8');
  assert.equal(written.split('\n').length, 102);
  assert.ok(written.endsWith('deferred 100\n'), 'a line deferred in the turn that exits is made and written');
  const crashed = await child(join(dir, 'crash.log'), 'sink.write("last words\\n");\nsetTimeout(() => { throw new Error("boom"); }, 1);');
  assert.equal(crashed.code, 1);
  assert.match(crashed.stderr, /boom/);
  assert.equal(readFileSync(join(dir, 'crash.log'), 'utf8'), 'last words\n');
  const rejected = await child(join(dir, 'rejected.log'), 'sink.write("last words\\n");\nawait Promise.reject(new Error("no"));');
  assert.equal(rejected.code, 1);
  assert.equal(readFileSync(join(dir, 'rejected.log'), 'utf8'), 'last words\n');
});

// A slow reader fills the pipe, so that writers block part way through a block.
test('two processes writing to one stdout pipe never interleave inside a line', async () => {
  const body = (writer: string): string => `const line = ${line.toString()};\nfor (let n = 0; n < 5000; n++) sink.write(line(${JSON.stringify(writer)}, n));`;
  const script = (writer: string): string =>
    `import { LogSink } from ${JSON.stringify(SINK)};\nconst sink = new LogSink({ destination: 'stdout', blockBytes: 65536 });\n${body(writer)}`;
  const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  const node = (writer: string): string => `${quote(process.execPath)} --import tsx --input-type=module -e ${quote(script(writer))}`;
  const proc = spawn('sh', ['-c', `(${node('a')} & ${node('b')} & wait) | (sleep 1; dd bs=512 status=none)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  await new Promise((resolve) => proc.on('close', resolve));
  const lines = out.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 10_000);
  const seen = { a: 0, b: 0 };
  for (const text of lines) {
    const parsed = JSON.parse(text) as { writer: 'a' | 'b'; n: number };
    assert.equal(`${text}\n`, line(parsed.writer, parsed.n));
    assert.equal(parsed.n, seen[parsed.writer], 'in order per writer');
    seen[parsed.writer] += 1;
  }
});

test('a destination that fails drops its lines and says so on stderr once, and the process goes on', async () => {
  const result = await child(
    '/dev/full',
    'for (let n = 0; n < 100; n++) sink.write("x".repeat(100) + "\\n");\nsink.flush();\nsink.flush();\nsink.write("y\\n"); sink.flush();\nconsole.log("still here");',
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, 'still here\n');
  assert.equal(result.stderr.match(/log destination \/dev\/full failed \(ENOSPC\)/g)?.length, 1, result.stderr);
});
