/**
 * An open-loop client for bench/disk-tail.ts: asks `rate` requests a second on schedule, whatever
 * the answers' pace, and times each from when it was due (so a stalled server is charged for the
 * requests that queued behind it, which a closed-loop client such as wrk would not send). Prints
 * one JSON line: each request's due time (epoch ms) and latency (ms), in order.
 *
 * argv: base URL, targets file (one per line, asked in turn), Authorization, Accept-Encoding
 * ('' for none), rate, seconds, connections.
 */
import { Agent, get } from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [base = '', targetsFile = '', authorization = '', acceptEncoding = '', rate = '3000', seconds = '10', connections = '32'] = process.argv.slice(2);
const targets = readFileSync(targetsFile, 'utf8')
  .split('\n')
  .filter((line) => line !== '');
const perSecond = Number(rate);
const total = perSecond * Number(seconds);
const url = new URL(base);
const agent = new Agent({ keepAlive: true, maxSockets: Number(connections) });
const headers: Record<string, string> = { authorization, ...(acceptEncoding === '' ? {} : { 'accept-encoding': acceptEncoding }) };
const latencies = new Float64Array(total);
// The first request is due shortly after start, once the timers run.
const start = performance.now() + 20;
const due = (i: number): number => start + (i * 1000) / perSecond;
let sent = 0;
let answered = 0;
let failed = 0;

function finish(): void {
  agent.destroy();
  const dueAt = Array.from({ length: total }, (_, i) => Number((performance.timeOrigin + due(i)).toFixed(3)));
  process.stdout.write(`${JSON.stringify({ failed, dueAt, latencyMs: Array.from(latencies, (ms) => Number(ms.toFixed(3))) })}\n`);
}

function answer(i: number, ok: boolean): void {
  latencies[i] = performance.now() - due(i);
  if (!ok) failed++;
  if (++answered === total) finish();
}

function send(i: number): void {
  const request = get({ host: url.hostname, port: url.port, path: targets[i % targets.length], headers, agent }, (response) => {
    response.resume();
    response.on('end', () => {
      answer(i, response.statusCode === 200);
    });
  });
  request.on('error', () => {
    answer(i, false);
  });
}

function tick(): void {
  const now = performance.now();
  while (sent < total && due(sent) <= now) send(sent++);
  if (sent < total) setTimeout(tick, 0);
}
setTimeout(tick, 20);
