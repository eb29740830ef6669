/** The `origin` and `seed` commands as separate processes, the way an operator starts them. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { tempDir } from '../support/config.ts';
import { get, metricValue, send, until } from '../support/harness.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { sharedCatalog } from '../support/origin-fixture.ts';

const NODE = 'node_modules/.bin/node';
const BIN = 'bin/catalog-gateway.js';

function run(args: string[], env: Record<string, string> = {}) {
  return spawn(NODE, [BIN, ...args], { env: { ...process.env, CATALOG_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function finish(child: ReturnType<typeof run>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

test('origin --port nope exits 78 naming the key, the source and the value', async () => {
  const { code, stderr } = await finish(run(['origin', '--port', 'nope'], { CATALOG_DATA_DIR: tempDir() }));
  assert.equal(code, 78);
  assert.match(stderr, /origin\.port = "nope" \(from flag --port\): expected an integer from 0 to 65535/);
});

test('a port already in use is reported in one line, exit 1, no stack trace', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = taken.address() as AddressInfo;
    const { code, stderr } = await finish(run(['origin', '--port', String(port), '--db', sharedCatalog()], { CATALOG_DATA_DIR: tempDir() }));
    assert.equal(code, 1);
    assert.equal(
      stderr.trim().split('\n').at(-1),
      `catalog-gateway origin: cannot listen on 127.0.0.1:${port} for the origin's API listener (--port): the address is already in use (choose another with the port flags or CATALOG_*_PORT)`,
    );
  } finally {
    taken.close();
  }
});

test('a bad value from the environment is named the same way', async () => {
  const { code, stderr } = await finish(run(['origin'], { CATALOG_DATA_DIR: tempDir(), CATALOG_ORIGIN_MAX_AGE_SECONDS: '-5' }));
  assert.equal(code, 78);
  assert.match(stderr, /origin\.maxAgeSeconds = "-5" \(from env CATALOG_ORIGIN_MAX_AGE_SECONDS\)/);
});

test('origin starts on free ports, logs "listening" with both URLs, serves, and exits 0 on SIGTERM', async () => {
  const dataDir = tempDir();
  const child = run(['origin', '--port', '0', '--admin-port', '0', '--db', sharedCatalog(), '--max-age', '7'], { CATALOG_DATA_DIR: dataDir });
  const exited = finish(child);
  let listening: { url: string; adminUrl: string } | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; url: string; adminUrl: string };
    if (entry.msg === 'listening') {
      listening = entry;
      break;
    }
  }
  assert.ok(listening !== undefined);
  const token = await mintToken(loadOrCreateSecret(join(dataDir, 'signing-secret')), { subject: 'cli', scope: 'catalog:read', ttlSeconds: 60 });
  const reply = await get(`${listening.url}/v1/books?q=river&limit=1`, { authorization: `Bearer ${token}` });
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['cache-control'], 'public, max-age=7');
  assert.equal((await get(`${listening.adminUrl}/healthz`)).status, 200);
  child.kill('SIGTERM');
  assert.equal((await exited).code, 0);
});

/** An origin process on `db`, once it has logged "listening". */
async function startOriginProcess(db: string, dataDir: string): Promise<{ child: ReturnType<typeof run>; url: string; adminUrl: string }> {
  const child = run(['origin', '--port', '0', '--admin-port', '0', '--db', db], { CATALOG_DATA_DIR: dataDir });
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; url: string; adminUrl: string };
    if (entry.msg === 'listening') return { child, url: entry.url, adminUrl: entry.adminUrl };
  }
  throw new Error('the origin exited before listening');
}

test('an event committed before the origin is killed (SIGKILL) is delivered by the next origin on the same catalog', async () => {
  const dataDir = tempDir();
  const db = join(dataDir, 'catalog.db');
  copyFileSync(sharedCatalog(), db);
  const catalog = new DatabaseSync(db, { readOnly: true });
  const holding = catalog.prepare('SELECT book_id, branch_id FROM holding WHERE copies = 1 AND on_loan = 0 LIMIT 1').get();
  catalog.close();
  const secret = loadOrCreateSecret(join(dataDir, 'signing-secret'));
  const bearer = async (scope: string): Promise<Record<string, string>> => ({
    authorization: `Bearer ${await mintToken(secret, { subject: 'cli', scope, ttlSeconds: 600 })}`,
  });
  // A receiver port that refuses connections until the receiver is started on it.
  const probe = await startWebhookReceiver();
  const port = Number(new URL(probe.url).port);
  await probe.close();

  const first = await startOriginProcess(db, dataDir);
  const hook = await send(`${first.url}/v1/webhooks`, 'POST', await bearer('catalog:admin'), { url: probe.url });
  const { secret: whsec } = JSON.parse(hook.body) as { secret: string };
  const lent = await send(`${first.url}/v1/loans`, 'POST', await bearer('catalog:write'), {
    book: `bk_${holding?.book_id as number}`,
    branch: holding?.branch_id,
  });
  assert.equal(lent.status, 201);
  await until(async () => metricValue((await get(`${first.adminUrl}/metrics`)).body, 'catalog_origin_event_deliveries_total', { outcome: 'failed' }) >= 1);
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');

  const receiver = await startWebhookReceiver(port);
  const second = await startOriginProcess(db, dataDir);
  try {
    await until(
      () =>
        new Promise((resolve) =>
          setTimeout(() => {
            resolve(receiver.received.length > 0);
          }, 50),
        ),
      10_000,
    );
    const event = new Webhook(whsec).verify(receiver.received[0]?.body ?? '', receiver.received[0]?.headers as Record<string, string>) as {
      data: { book: string; available: boolean };
    };
    assert.deepEqual(event.data, { book: `bk_${holding?.book_id as number}`, branch: holding?.branch_id, available: false });
  } finally {
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
    await receiver.close();
  }
});

test('seed builds the catalog it is asked for and says so', async () => {
  const db = join(tempDir(), 'small.db');
  const { code, stdout } = await finish(run(['seed', '--db', db, '--books', '300']));
  assert.equal(code, 0);
  assert.match(stdout, new RegExp(`^seeded 300 books into ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\([0-9.]+ MiB\\) in [0-9.]+ s\\n$`));
});
