/** Access lines are written without pino's serializer; they must still be JSON a log pipeline parses, field for field. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArrivalFields, createAccessLog, roundMs, type AccessRecord } from '../../src/shared/access-log.ts';
import { NO_CREDENTIAL_NAMES, parseCredentialNames, redactTarget } from '../../src/shared/credentials.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { testConfig } from '../support/config.ts';
import { captureLogs } from '../support/harness.ts';

interface GatewayLike extends AccessRecord {
  readonly cache: string;
  readonly originMs: number | undefined;
}

test('a JSON access line parses to exactly the record, whatever a client put in its strings', () => {
  const logs = captureLogs();
  const log = createAccessLog<GatewayLike>(createLogger(testConfig({ 'log.level': 'info' }), 'catalog-gateway', logs), {
    enabled: true,
    format: 'json',
    service: 'catalog-gateway',
    extraFields: ['cache', 'originMs'],
  });
  const record: GatewayLike = {
    reqId: 'req-1',
    method: 'GET',
    path: redactTarget('/v1/books?q=%22quoted%22&q2="raw"\\x', NO_CREDENTIAL_NAMES),
    status: 200,
    bytes: 3983,
    durationMs: 0.125,
    cache: 'hit',
    originMs: undefined,
    sub: 'dev "admin"\n',
    remote: '::1',
    ua: 'curl/8 "x" \u0001 é ☃ \ud800 \\',
    proto: 'HTTP/1.1',
  };
  log(record);
  log({
    ...record,
    path: redactTarget('/v1/books?access_token=secret&q=a', parseCredentialNames('access_token')),
    sub: undefined,
    ua: undefined,
    originMs: 8.5,
    cache: 'miss',
  });
  const [first, second] = logs.lines();
  const { time, ...rest } = first ?? {};
  assert.match(String(time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(rest, { level: 'info', service: 'catalog-gateway', ...(JSON.parse(JSON.stringify(record)) as object), msg: 'request' });
  assert.equal(second?.path, '/v1/books?access_token=REDACTED&q=a');
  assert.equal(second.originMs, 8.5);
  assert.equal(second.cache, 'miss');
  assert.ok(!('sub' in second) && !('ua' in second), 'absent fields are left out, as JSON.stringify leaves undefined out');
});

test('an access log below its level, or turned off, writes nothing', () => {
  const logs = captureLogs();
  const quiet = createAccessLog(createLogger(testConfig({ 'log.level': 'warn' }), 'catalog-origin', logs), {
    enabled: true,
    format: 'json',
    service: 'catalog-origin',
  });
  quiet({
    reqId: 'r',
    method: 'GET',
    path: redactTarget('/', NO_CREDENTIAL_NAMES),
    status: 200,
    bytes: 0,
    durationMs: 1,
    sub: undefined,
    remote: undefined,
    ua: undefined,
    proto: 'HTTP/1.1',
  });
  assert.equal(logs.text(), '');
});

test('durationMs is written as String writes the duration rounded to the microsecond, at any size', () => {
  const logs = captureLogs();
  const log = createAccessLog(createLogger(testConfig({ 'log.level': 'info' }), 'catalog-gateway', logs), {
    enabled: true,
    format: 'json',
    service: 'catalog-gateway',
  });
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const durations = [0, 0.001, 0.01, 0.1, 0.12, 0.125, 0.5, 1, 1.5, 10.05, 100, 999.999, 1_234_567.891];
  for (let i = 0; i < 3000; i++) durations.push(random() * 10 ** Math.floor(random() * 9 - 2));
  for (let us = 0; us < 1000; us++) durations.push(3 + us / 1000);
  for (const durationMs of durations)
    log({
      reqId: 'r',
      method: 'GET',
      path: redactTarget('/', NO_CREDENTIAL_NAMES),
      status: 200,
      bytes: 0,
      durationMs: roundMs(durationMs),
      sub: undefined,
      remote: undefined,
      ua: undefined,
      proto: 'HTTP/1.1',
    });
  const written = logs
    .text()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => /"durationMs":([^,]*),/.exec(line)?.[1]);
  assert.deepEqual(
    written,
    durations.map((d) => String(roundMs(d))),
  );
});

test('request ids the server makes are version-8 UUIDs that count up by one, across every wrap of their last digits', () => {
  const arrivals = new ArrivalFields();
  const ids = Array.from({ length: 600 }, () => arrivals.requestId(undefined));
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const counts = ids.map((id) => Number.parseInt(id.slice(-12), 16));
  counts.forEach((count, i) => {
    if (i > 0) assert.equal(count, (counts[i - 1] ?? 0) + 1, `${ids[i - 1] ?? ''} then ${ids[i] ?? ''}`);
  });
  assert.equal(new Set(ids.map((id) => id.slice(0, 24))).size, 1, 'one prefix per server');
  assert.notEqual(new ArrivalFields().requestId(undefined).slice(0, 24), ids[0]?.slice(0, 24), 'another server draws its own');
  assert.equal(arrivals.requestId('caller-chosen.id:1'), 'caller-chosen.id:1', 'a sane id is propagated');
  assert.notEqual(arrivals.requestId('aaaaaaaaaaaa.bbbbbbbbbbbb.cccc'), 'aaaaaaaaaaaa.bbbbbbbbbbbb.cccc', 'a JWT-shaped id is replaced');
});
