/**
 * The disk tier as an operator meets it: a gateway process stopped (SIGTERM) or killed (SIGKILL)
 * starts again answering what it had stored without asking the origin; the workers of one host
 * share it; a purge reaches it. And its faults: a database that is not one or of another layout
 * is set aside, a torn value is a miss, a full disk keeps the gateway serving and writes resume
 * when space returns, and a directory another live gateway owns is refused, naming it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test, type TestContext } from 'node:test';
import pino from 'pino';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { DiskTierInUse } from '../../src/gateway/store/disk/disk-store.ts';
import { cacheKey, ResponseCache } from '../../src/gateway/store/memory/response-cache.ts';
import { EntryMaker } from '../../src/gateway/store/stored-response.ts';
import { Tiers } from '../../src/gateway/store/tiers.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { run, type CliProcess } from '../support/cli-process.ts';
import { openDiskTier } from '../support/disk-tier.ts';
import { tempDir } from '../support/config.ts';
import { OK, startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { HEALTH_PATH } from '../support/health-check.ts';
import { captureLogs, get, metricValue, send, until } from '../support/harness.ts';
import { freshFacts } from '../support/entry-facts.ts';

const NOW = Date.now();
const FACTS = freshFacts(600_000, NOW);

interface Running {
  readonly gw: CliProcess;
  readonly url: string;
  readonly adminUrl: string;
}

/** A gateway process in front of `origin`, its state in `dataDir`, without event registration (the fault origin sends none). */
async function startProcess(t: TestContext, origin: FaultOrigin, dataDir: string, args: readonly string[] = []): Promise<Running> {
  const gw = run(['gateway', '--origin', origin.url, '--origin-probe', HEALTH_PATH, '--port', '0', '--admin-port', '0', ...args], {
    CATALOG_DATA_DIR: dataDir,
    CATALOG_LOG_LEVEL: 'info',
    CATALOG_GATEWAY_ACCESS_LOG: 'false',
    CATALOG_GATEWAY_EVENTS_REGISTER: 'false',
  });
  t.after(() => gw.child.kill('SIGKILL'));
  const { url, adminUrl } = JSON.parse(await gw.line((l) => l.includes('"msg":"listening"'))) as { url: string; adminUrl: string };
  return { gw, url, adminUrl };
}

async function token(dataDir: string, scope = 'catalog:read'): Promise<string> {
  return `Bearer ${await mintToken(loadOrCreateSecret(join(dataDir, 'signing-secret')), { subject: 'tester', scope, ttlSeconds: 600 })}`;
}

async function diskWrites(adminUrl: string): Promise<number> {
  return metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_disk_writes_total');
}

async function stopWith(gw: CliProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = once(gw.child, 'exit');
  gw.child.kill(signal);
  await exited;
}

describe('the disk tier across restarts', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    test(`after ${signal}, the next gateway answers what was stored from disk, without the origin`, async (t) => {
      const origin = await startFaultOrigin();
      origin.behave(() => OK);
      t.after(() => origin.close());
      const dataDir = tempDir();
      const auth = { authorization: await token(dataDir) };
      const targets = Array.from({ length: 20 }, (_, i) => `/v1/books?q=warm${i}`);
      const first = await startProcess(t, origin, dataDir);
      for (const target of targets) assert.match(String((await get(first.url + target, auth)).headers['cache-status']), /fwd=miss; stored/);
      await until(async () => (await diskWrites(first.adminUrl)) >= targets.length);
      await stopWith(first.gw, signal);

      const second = await startProcess(t, origin, dataDir);
      for (const target of targets) {
        const reply = await get(second.url + target, auth);
        assert.equal(reply.status, 200);
        assert.match(String(reply.headers['cache-status']), /; hit; ttl=\d+; detail=disk$/, `${target} from disk`);
        assert.equal(origin.count(target), 1, `${target} was asked of the origin once, before the restart`);
        assert.match(String((await get(second.url + target, auth)).headers['cache-status']), /; hit; ttl=\d+$/, 'then from memory');
      }
    });
  }

  test('a purge reaches the disk tier: after a restart, what it named is asked of the origin again', async (t) => {
    const origin = await startFaultOrigin();
    origin.behave(() => OK);
    t.after(() => origin.close());
    const dataDir = tempDir();
    const auth = { authorization: await token(dataDir) };
    const first = await startProcess(t, origin, dataDir);
    for (const target of ['/v1/books?q=kept', '/v1/books?q=gone']) await get(first.url + target, auth);
    await until(async () => (await diskWrites(first.adminUrl)) >= 2);
    const purged = await send(`${first.adminUrl}/purge`, 'POST', { authorization: await token(dataDir, 'catalog:admin') }, { urls: ['/v1/books?q=gone'] });
    assert.equal(purged.status, 200);
    await stopWith(first.gw, 'SIGTERM');
    const second = await startProcess(t, origin, dataDir);
    assert.match(String((await get(`${second.url}/v1/books?q=kept`, auth)).headers['cache-status']), /detail=disk/);
    assert.match(String((await get(`${second.url}/v1/books?q=gone`, auth)).headers['cache-status']), /fwd=miss/);
    assert.equal(origin.count('/v1/books?q=gone'), 2);
  });

  test('the workers of one host share it: a query asked on many connections reaches the origin once', async (t) => {
    const origin = await startFaultOrigin();
    origin.behave(() => OK);
    t.after(() => origin.close());
    const dataDir = tempDir();
    const auth = { authorization: await token(dataDir) };
    const gw = await startProcess(t, origin, dataDir, ['--workers', '2']);
    await gw.gw.line((l) => l.includes('"msg":"worker listening"') && gw.gw.seen.filter((s) => s.includes('"msg":"worker listening"')).length === 2);
    const target = '/v1/books?q=shared';
    await get(gw.url + target, auth);
    await until(async () => (await diskWrites(gw.adminUrl)) >= 1);
    const statuses = new Set<string>();
    // A connection of its own each time, so node:cluster hands them to both workers.
    for (let i = 0; i < 20; i++)
      statuses.add(String((await get(gw.url + target, { ...auth, connection: 'close' })).headers['cache-status']).replace(/ttl=\d+/, 'ttl'));
    assert.equal(origin.count(target), 1, 'one origin call for the host');
    assert.ok(statuses.has('catalog-gateway; hit; ttl; detail=disk'), `the other worker found it on disk: ${[...statuses].join(' | ')}`);
  });
});

function store(dir: string, log = new PurgeLog(), logs = captureLogs(), owner = process.pid) {
  return openDiskTier(dir, { purges: log, logger: pino({ level: 'info' }, logs), owner });
}

function answer(maker: EntryMaker, body = '{"results":[]}') {
  return maker.prepare(200, { 'content-type': 'application/json' }, Buffer.from(body), { keep: 'identity', offered: [] }, FACTS, undefined, [], ['bk_1']);
}

test('the workers of one host take turns at a cold query: many concurrent requests for the same keys reach the origin once per key', async (t) => {
  const origin = await startFaultOrigin();
  origin.behave(() => OK);
  t.after(() => origin.close());
  const dataDir = tempDir();
  const auth = { authorization: await token(dataDir) };
  const gw = await startProcess(t, origin, dataDir, ['--workers', '2']);
  await gw.gw.line((l) => l.includes('"msg":"worker listening"') && gw.gw.seen.filter((s) => s.includes('"msg":"worker listening"')).length === 2);
  const targets = Array.from({ length: 6 }, (_, i) => `/v1/books?q=cold${i}`);
  // The origin holds its answers, so every request arrives while the first fill of its key is under way.
  const gate = origin.hold();
  const replies = targets.flatMap((target) =>
    // A connection of its own each, so node:cluster hands them to both workers in turn.
    Array.from({ length: 8 }, () => get(gw.url + target, { ...auth, connection: 'close' })),
  );
  await origin.receivedAtLeast(targets.length);
  await new Promise((resolve) => setTimeout(resolve, 300));
  gate.release();
  const statuses = (await Promise.all(replies)).map((reply) => {
    assert.equal(reply.status, 200);
    return String(reply.headers['cache-status']);
  });
  for (const target of targets) assert.equal(origin.count(target), 1, `${target} reached the origin once`);
  assert.ok(
    statuses.some((status) => /; hit; ttl=\d+; detail=disk$/.test(status)),
    `a worker that waited found the other's fill on disk: ${statuses.join(' | ')}`,
  );
  const metrics = (await get(`${gw.adminUrl}/metrics`)).body;
  assert.equal(metricValue(metrics, 'catalog_gateway_host_fills_total', { role: 'leader' }), targets.length, 'one leader per key');
  assert.ok(metricValue(metrics, 'catalog_gateway_host_fills_total', { role: 'waited' }) >= 1, 'the other worker waited');
  assert.equal(metricValue(metrics, 'catalog_gateway_host_fills_total', { role: 'timeout' }), 0);
});

describe("the disk tier's faults", () => {
  const stamp = { generation: 0, mark: '' };

  for (const [what, make] of [
    [
      'a file that is not a database',
      (file: string) => {
        writeFileSync(file, 'this is not a database, only text that is long enough to be read as a header '.repeat(20));
      },
    ],
    [
      'a database of another layout',
      (file: string) => {
        const db = new DatabaseSync(file);
        db.exec('CREATE TABLE entry (x); PRAGMA user_version = 7');
        db.close();
      },
    ],
  ] as const) {
    test(`${what} is set aside with one log line, and the tier starts empty and works`, async () => {
      const dir = tempDir();
      make(join(dir, 'cache.db'));
      const logs = captureLogs();
      const { disk, maker, registry } = store(dir, new PurgeLog(), logs);
      try {
        assert.equal(logs.lines().filter((l) => l.msg === 'the disk tier could not be read; set aside, starting empty').length, 1);
        assert.ok(
          readdirSync(dir).some((f) => f.startsWith('cache.db.bad-')),
          'the old file is kept beside, for a look',
        );
        assert.equal(await disk.put(cacheKey('/a'), answer(maker), stamp), undefined);
        assert.equal(disk.get(cacheKey('/a'), {})?.body.toString(), '{"results":[]}');
        assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_disk_errors_total', { kind: 'corrupt' }), 1);
      } finally {
        disk.close();
      }
    });
  }

  /**
   * Stores `/damaged` and `/whole`, lets `damage` change the database as another process would,
   * then checks that `/damaged` is a miss, counted as a checksum error and deleted, and `/whole` served.
   */
  async function damagedIsMissed(damage: (other: DatabaseSync) => void): Promise<void> {
    const dir = tempDir();
    const { disk, maker, registry } = store(dir);
    try {
      await disk.put(cacheKey('/damaged'), answer(maker, '{"damaged":true}'), stamp);
      await disk.put(cacheKey('/whole'), answer(maker, '{"whole":true}'), stamp);
      const other = new DatabaseSync(join(dir, 'cache.db'));
      damage(other);
      other.close();
      assert.equal(disk.get(cacheKey('/damaged'), {}), undefined);
      assert.equal(disk.get(cacheKey('/whole'), {})?.body.toString(), '{"whole":true}');
      assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_disk_errors_total', { kind: 'checksum' }), 1);
      assert.equal(disk.size().entries, 1, 'the damaged value is gone');
    } finally {
      disk.close();
    }
  }

  test('a value torn or damaged on disk is a miss, counted, and deleted; the others are served', async () => {
    await damagedIsMissed((other) => {
      other.exec("UPDATE entry SET value = substr(value, 1, length(value) - 3) WHERE key = '/damaged'");
    });
  });

  test('a value from an earlier boot of the machine is checksummed: one bit flipped in its body is a miss, counted, and deleted', async () => {
    await damagedIsMissed((other) => {
      // Written before a crash the machine went down with: a boot other than this one (both rows,
      // so that the intact one of an earlier boot is served).
      other.exec('UPDATE entry SET boot = boot + 1');
      const row = other.prepare("SELECT value FROM entry WHERE key = '/damaged'").get();
      const flipped = Buffer.from(row?.value as Uint8Array);
      flipped[flipped.length - 2] = (flipped[flipped.length - 2] ?? 0) ^ 1;
      other.prepare("UPDATE entry SET value = ? WHERE key = '/damaged'").run(flipped);
    });
  });

  test('a directory another live gateway owns is refused, naming it; one whose owner is gone is taken over', () => {
    const dir = tempDir();
    const other = spawn('sleep', ['30']);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'owner'), String(other.pid));
      assert.throws(
        () => store(dir),
        (err: unknown) => err instanceof DiskTierInUse && err.message.includes(dir) && err.message.includes(String(other.pid)),
      );
    } finally {
      other.kill();
    }
    const gone = spawnSync('true').pid;
    writeFileSync(join(dir, 'owner'), String(gone));
    const { disk } = store(dir);
    disk.close();
    assert.equal(existsSync(join(dir, 'owner')), false, 'given up at close');
  });

  test('a full disk (a small tmpfs) drops writes, counted and logged once, keeps reads, and writes resume when space returns', async (t) => {
    const dir = tempDir();
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir]);
    assert.equal(mounted.status, 0, `mounting a tmpfs needs root, as CI runs: ${String(mounted.stderr)}`);
    t.after(() => spawnSync('umount', ['-l', dir]));
    const logs = captureLogs();
    const { disk, maker, registry } = store(dir, new PurgeLog(), logs);
    try {
      await disk.put(cacheKey('/first'), answer(maker, '{"first":true}'), stamp);
      const ballast = join(dir, 'ballast');
      // Whatever space is left, taken: the tier's next commits find the disk full.
      spawnSync('sh', ['-c', `cat /dev/urandom > ${ballast} 2>/dev/null`]);
      const big = '{"x":"'.padEnd(40_000, 'y') + '"}';
      const results = [];
      for (let i = 0; i < 20; i++) results.push(await disk.put(cacheKey(`/big${i}`), answer(maker, big), stamp));
      assert.ok(results.includes('failed'), `some write failed for want of space: ${results.join(',')}`);
      assert.equal(disk.get(cacheKey('/first'), {})?.body.toString(), '{"first":true}', 'reads go on');
      const full = logs.lines().filter((l) => String(l.msg).startsWith('the disk tier is full'));
      assert.equal(full.length, 1, 'logged once for the episode');
      assert.ok(metricValue(await registry.metrics(), 'catalog_gateway_disk_errors_total', { kind: 'full' }) >= 1);
      rmSync(ballast);
      assert.equal(await disk.put(cacheKey('/after'), answer(maker, '{"after":true}'), stamp), undefined, 'space returned: written');
      assert.equal(disk.get(cacheKey('/after'), {})?.body.toString(), '{"after":true}');
      assert.ok(logs.lines().some((l) => l.msg === 'the disk tier is writable again'));
    } finally {
      disk.close();
    }
  });

  test('the bound holds: the least recently used entries go first', async () => {
    const dir = tempDir();
    const { disk, maker } = openDiskTier(dir, { maxBytes: 1 << 20 });
    try {
      const body = '{"x":"'.padEnd(20_000, 'z') + '"}';
      await disk.put(cacheKey('/k0'), answer(maker, body), stamp);
      for (let i = 1; i < 120; i++) {
        // /k0 is read all along, so it is never the least recently used.
        assert.ok(disk.get(cacheKey('/k0'), {}) !== undefined, `k0 kept at ${i}`);
        await disk.put(cacheKey(`/k${i}`), answer(maker, body), stamp);
      }
      const { bytes, entries } = disk.size();
      assert.ok(bytes <= 1 << 20, `${bytes} B within the bound`);
      assert.ok(entries < 120 && entries > 30, `${entries} entries kept`);
      assert.equal(disk.get(cacheKey('/k1'), {}), undefined, 'the oldest unread went first');
    } finally {
      disk.close();
    }
  });
});

describe('codings made for disk hits', () => {
  const codec = new Codec({ gzip: 6, br: 5, zstd: 3 });
  const IDENTITY = '{"results":"'.padEnd(3000, 'w') + '"}';

  /** Memory too small for the entry, over a disk tier holding it gzip-kept: every lookup is a disk hit. */
  async function diskHits() {
    const purges = new PurgeLog();
    const dir = tempDir();
    const tier = openDiskTier(dir, { purges });
    const memory = new ResponseCache({ maxBytes: 64, maxEntryBytes: 1 << 20, purges, admission: false, codec });
    const tiers = new Tiers(memory, tier.disk, purges);
    const key = cacheKey('/v1/books?q=identity');
    const gz = (text: string) =>
      tier.maker.prepare(
        200,
        { 'content-type': 'application/json', 'content-encoding': 'gzip', etag: '"v1"' },
        codec.encode(Buffer.from(text), 'gzip'),
        { keep: 'gzip', offered: ['gzip', 'identity'] },
        FACTS,
        undefined,
        [],
        ['bk_1'],
      );
    assert.equal(await tier.disk.put(key, gz(IDENTITY), tiers.stamp()), undefined);
    return { ...tier, tiers, key, gz, dir };
  }

  function diskHit(tiers: Tiers, key: ReturnType<typeof cacheKey>) {
    const found = tiers.lookup(key, {});
    assert.ok(found.kind === 'found' && found.fromDisk === true, 'a disk hit');
    return found.response;
  }

  test("one made for a disk hit is added to the entry's value, so that its next hits read it instead of making it", async () => {
    const { disk, tiers, key, registry } = await diskHits();
    try {
      const first = diskHit(tiers, key);
      assert.equal(first.representation('identity'), undefined, 'the fill kept gzip alone');
      const made = tiers.represent(key, first, 'identity', false);
      assert.equal(made.body.toString(), IDENTITY);
      disk.flush();
      assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_disk_writes_total'), 2, 'the fill, and the value again with identity');
      const next = diskHit(tiers, key);
      assert.equal(next.kept.coding, 'gzip', 'the kept body stays the one sent to gzip clients');
      assert.equal(next.representation('identity')?.body.toString(), IDENTITY);
      assert.equal(next.representation('identity')?.etag, made.etag);
      assert.equal(tiers.represent(key, next, 'identity', false), next.representation('identity'), 'read, not made');
      disk.flush();
      assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_disk_writes_total'), 2, 'nothing more written');
    } finally {
      disk.close();
    }
  });

  test('a disk hit is promoted by copying the bytes read: memory holds the entry as a put of it would, numbered, counted, tagged', async () => {
    const { disk: writer, tiers: writing, key, dir } = await diskHits();
    writing.represent(key, diskHit(writing, key), 'identity', false);
    writer.close();
    // Read by another process, whose table the value's shapes are new to.
    const purges = new PurgeLog();
    const memory = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 20, purges, admission: false, codec });
    const { disk } = openDiskTier(dir, { purges, maker: memory.maker });
    const tiers = new Tiers(memory, disk, purges);
    try {
      const read = diskHit(tiers, key);
      assert.ok(disk.variantsOf(read) !== undefined, 'promoted from the bytes read');
      assert.ok(read.kept.shapeBytes > 0, "the read brought the value's shapes to this table");
      const adopted = memory.get(key, {});
      const adoptedBytes = memory.bytes;
      const byTag = { selector: { kind: 'tags', tags: ['bk_1'] }, soft: true, at: Date.now() } as const;
      assert.equal(memory.purge(byTag), 1, 'found by its tag, indexed from the hashes the value carries');
      memory.delete([key]);
      assert.equal(memory.put(key, read, tiers.stamp()), undefined);
      assert.equal(memory.bytes, adoptedBytes, 'counted as a put of it is');
      const put = memory.get(key, {});
      for (const r of [adopted, put]) {
        assert.ok(r !== undefined && r.serial > 0, 'numbered by the cache');
        assert.deepEqual(r.headers, read.headers);
        assert.deepEqual([r.lifetimeMs, r.storedAt, r.tagText, r.offered], [read.lifetimeMs, read.storedAt, read.tagText, read.offered]);
        assert.ok(r.body.equals(read.body));
        assert.equal(r.kept.shapeBytes, read.kept.shapeBytes, 'the cost of the shape it brought, which a rewrite of the record counts again');
        assert.equal(r.representation('identity')?.body.toString(), IDENTITY);
        assert.deepEqual(r.representation('identity')?.headers, read.representation('identity')?.headers);
      }
      const purge = { selector: { kind: 'tags', tags: ['bk_1'] }, soft: false, at: Date.now() } as const;
      purges.applied(purge, false);
      assert.equal(memory.purge(purge), 1, 'found by its tag');
    } finally {
      disk.close();
    }
  });

  test('adding one never undoes a fill or a purge made after the read', async () => {
    const { disk, tiers, key, gz, purges } = await diskHits();
    try {
      const refilled = diskHit(tiers, key);
      assert.equal(await disk.put(key, gz('{"newer":true}'), tiers.stamp()), undefined);
      tiers.represent(key, refilled, 'identity', false);
      disk.flush();
      const newer = diskHit(tiers, key);
      assert.equal(codec.decode(newer.body, 'gzip').toString(), '{"newer":true}', 'the fill since stands');
      assert.equal(newer.representation('identity'), undefined);

      const purged = diskHit(tiers, key);
      const purge = { selector: { kind: 'urls', keys: [key] }, soft: false, at: Date.now() } as const;
      purges.applied(purge, false);
      tiers.purge(purge);
      tiers.represent(key, purged, 'identity', false);
      disk.flush();
      assert.equal(disk.get(key, {}), undefined, 'the purge since stands');
    } finally {
      disk.close();
    }
  });
});

test('a second gateway pointed at a directory a live one uses is refused at start, in one line naming it, alone or with workers', async (t) => {
  const origin = await startFaultOrigin();
  origin.behave(() => OK);
  t.after(() => origin.close());
  const dataDir = tempDir();
  await startProcess(t, origin, dataDir);
  for (const workers of ['1', '2']) {
    const second = run(['gateway', '--origin', origin.url, '--port', '0', '--admin-port', '0', '--workers', workers], {
      CATALOG_DATA_DIR: dataDir,
      CATALOG_GATEWAY_EVENTS_REGISTER: 'false',
    });
    let stderr = '';
    second.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(second.child, 'exit')) as [number | null];
    assert.equal(code, 1, `--workers ${workers}`);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(
      stderr,
      new RegExp(`gateway\\.cache\\.disk\\.path ${join(dataDir, 'cache').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another gateway \\(pid \\d+\\)`),
    );
  }
});

test('the workers of a host opening a new disk tier at once all open it: one makes the layout, the others find it', async () => {
  const dir = tempDir();
  const startAt = Date.now() + 3000;
  const opened = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const child = spawn('node_modules/.bin/node', ['--import', 'tsx', 'test/support/open-disk-tier.ts', dir, String(process.pid), String(startAt)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, stderr };
    }),
  );
  assert.deepEqual(
    opened.filter((o) => o.code !== 0),
    [],
    'every process opened it',
  );
});

test('killed (SIGKILL) in the middle of heavy writes, the disk tier serves every entry it kept whole, and no torn one', async () => {
  const dir = tempDir();
  const writer = spawn('node_modules/.bin/node', ['--import', 'tsx', 'test/support/write-disk-tier.ts', dir, String(process.pid)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(writer.stdout, 'data');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  writer.kill('SIGKILL');
  await once(writer, 'exit');
  const db = new DatabaseSync(join(dir, 'cache.db'), { readOnly: true });
  const keys = db
    .prepare('SELECT key FROM entry')
    .all()
    .map((row) => String(row.key));
  db.close();
  assert.ok(keys.length >= 64, `${keys.length} entries were committed before the kill`);
  const { disk, registry } = store(dir);
  try {
    for (const key of keys) {
      const found = disk.get(cacheKey(key), {});
      assert.ok(found !== undefined, `${key} is served`);
      assert.ok(found.body.equals(Buffer.from(key.repeat(Math.ceil(3000 / key.length)))), `${key} is whole`);
    }
    assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_disk_errors_total', { kind: 'checksum' }), 0, 'no value failed its checksum');
  } finally {
    disk.close();
  }
});

/** What reading a disk tier in a cycle left in V8's old generation (test/support/read-disk-tier.ts), in a child process of its own. */
async function oldGenerationPerRead(...args: string[]): Promise<{ bytesPerRead: number; fullCollections: number }> {
  // An old generation of 512 MiB keeps a full collection from running and hiding what the reads left.
  const child = spawn('node_modules/.bin/node', ['--initial-old-space-size=512', '--import', 'tsx', 'test/support/read-disk-tier.ts', tempDir(), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
  const measured = JSON.parse(stdout) as { bytesPerRead: number; fullCollections: number };
  assert.equal(measured.fullCollections, 0, 'no full collection ran while the reads were measured');
  return measured;
}

test("a disk hit's read leaves next to nothing in V8's old generation, which only a full collection frees", async () => {
  // Read as objects, node:sqlite's rows left 72 B each there, and what reaches it sets the rate of
  // full collections (docs/performance.md, "A disk hit's tail").
  const { bytesPerRead } = await oldGenerationPerRead();
  assert.ok(bytesPerRead < 16, `${bytesPerRead.toFixed(1)} B a read reached the old generation`);
});

test('reads of more rows than fit in a Set of ids leave nothing there either: the read marks are bits', async () => {
  // 150,000 rows read in turn: a Set of the ids read, cleared when it held 100,000, left 52 B a read.
  const { bytesPerRead } = await oldGenerationPerRead('150000', '40', '150000');
  assert.ok(bytesPerRead < 16, `${bytesPerRead.toFixed(1)} B a read reached the old generation`);
});
