import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/cli/args.ts';
import { loadtestHelp, parseLoadtestArgs } from '../../src/loadtest/args.ts';

test('defaults: embedded target, 30 s, 50 connections, seed 1', () => {
  const options = parseLoadtestArgs([]);
  assert.notEqual(options, 'help');
  if (options === 'help') return;
  assert.equal(options.urls, undefined);
  assert.equal(options.duration, 30);
  assert.equal(options.amount, undefined);
  assert.equal(options.connections, 50);
  assert.equal(options.seed, 1);
  assert.equal(options.zipf, 1);
  assert.equal(options.json, false);
});

test('a fleet: several gateways and their admin listeners, comma-separated', () => {
  const options = parseLoadtestArgs([
    '--url',
    'http://127.0.0.1:8080,http://127.0.0.1:8081/',
    '--gateway-admin',
    'http://127.0.0.1:9090, http://127.0.0.1:9091',
  ]);
  assert.notEqual(options, 'help');
  if (options === 'help') return;
  assert.deepEqual(options.urls, ['http://127.0.0.1:8080', 'http://127.0.0.1:8081']);
  assert.deepEqual(options.gatewayAdmins, ['http://127.0.0.1:9090', 'http://127.0.0.1:9091']);
  assert.throws(() => parseLoadtestArgs(['--url', 'http://a:1,http://a:1']), /names a URL twice/);
  assert.throws(() => parseLoadtestArgs(['--url', 'http://a:1,ftp://b']), /--url must be an http/);
});

test('flags are read and URLs reduced to their origin', () => {
  const options = parseLoadtestArgs([
    '--url',
    'http://127.0.0.1:8080/',
    '--gateway-admin',
    'http://127.0.0.1:9090',
    '--origin-admin',
    'http://127.0.0.1:9091',
    '--amount',
    '500',
    '--connections',
    '10',
    '--rate',
    '100',
    '--zipf',
    '0.9',
    '--distinct',
    '2000',
    '--paging',
    '0.2',
    '--filters',
    '0.3',
    '--crawler',
    '0.25',
    '--accept-encoding',
    'gzip, br',
    '--subjects',
    '7',
    '--seed',
    '99',
    '--json',
    '--out',
    'x',
  ]);
  assert.deepEqual(options, {
    urls: ['http://127.0.0.1:8080'],
    gatewayAdmins: ['http://127.0.0.1:9090'],
    originAdmin: 'http://127.0.0.1:9091',
    amount: 500,
    connections: 10,
    rate: 100,
    zipf: 0.9,
    distinct: 2000,
    paging: 0.2,
    filters: 0.3,
    crawler: 0.25,
    acceptEncoding: 'gzip, br',
    subjects: 7,
    seed: 99,
    json: true,
    out: 'x',
    circulation: false,
    loansPerSecond: 1,
    allowedLagMs: 1000,
  });
});

test('--help is recognised and lists every flag', () => {
  assert.equal(parseLoadtestArgs(['--help']), 'help');
  for (const flag of ['--url', '--zipf', '--distinct', '--seed', '--json', '--secret-file']) assert.ok(loadtestHelp().includes(flag), flag);
});

const BAD: readonly (readonly [readonly string[], string])[] = [
  [['--zipf', 'steep'], '--zipf'],
  [['--zipf', '-1'], '--zipf'],
  [['--distinct', '0'], '--distinct'],
  [['--connections', '1.5'], '--connections'],
  [['--duration', '0'], '--duration'],
  [['--paging', '1.5'], '--paging'],
  [['--paging', '0.6', '--filters', '0.6'], '--paging and --filters'],
  [['--url', 'ftp://x'], '--url'],
  [['--url', 'not a url'], '--url'],
  [['--gateway-admin', 'http://127.0.0.1:9090'], '--gateway-admin'],
  [['--duration', '5', '--amount', '100'], '--duration or --amount'],
  [['--amount', '10', '--connections', '50'], '--amount'],
  [['--subjects', '70000'], '--subjects'],
  [['--seed', 'x'], '--seed'],
  [['--rate', '0'], '--rate'],
  [['--out', ''], '--out'],
  [['--bogus'], "'--bogus'"],
  [['--zipf'], "'--zipf"],
];

for (const [argv, named] of BAD) {
  test(`refuses ${argv.join(' ')} naming ${named}`, () => {
    assert.throws(
      () => parseLoadtestArgs(argv),
      (err: unknown) => err instanceof UsageError && err.message.includes(named),
    );
  });
}
