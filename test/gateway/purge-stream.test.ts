/**
 * The purge stream's hearing through a busy event loop, against a real Redis: a process that
 * reads the stream without fault must not take itself for cut off (gateway.redis.partitionBoundMs)
 * because its replies wait behind requests, or it revalidates fresh entries (docs/benchmarks.md,
 * the 2-worker rows).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/load.ts';
import { createFleet } from '../../src/gateway/fleet/fleet.ts';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { ResponseCache } from '../../src/gateway/store/memory/response-cache.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { startRedis } from '../support/redis.ts';

/**
 * Every reply of a blocking read (1 s) waits behind one of these turns; shorter than the read's
 * margin past its wait (the command timeout, 250 ms, less Redis's 100 ms timer), so that the
 * turns delay replies without making the reads time out.
 */
const BUSY_MS = 100;

function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // The event loop is held as a burst of requests would hold it.
  }
}

test('a process whose event loop is busy in 100 ms turns is not taken for cut off from the purge stream', async () => {
  const redis = await startRedis();
  const config = loadConfig({ env: {} });
  const purges = new PurgeLog();
  const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges, admission: true, codec: new Codec({ gzip: 6, br: 5, zstd: 3 }) });
  const fleet = createFleet(config, redis.url, {
    registry: new Registry(),
    logger: pino({ level: 'silent' }),
    now: Date.now,
    maker: cache.maker,
    purges,
    group: undefined,
    applyPurge: () => undefined,
  });
  try {
    await fleet.start();
    assert.equal(fleet.partitionMaxAgeMs(), undefined, 'in touch once started');
    let turns = 0;
    let cutOff = 0;
    for (const end = Date.now() + 4 * 1000; Date.now() < end; turns++) {
      busy(BUSY_MS);
      // Read before the turn ends, while a reply that came during it still waits to be handled.
      if (fleet.partitionMaxAgeMs() !== undefined) cutOff++;
      await yieldTurn();
    }
    assert.ok(turns >= 20);
    assert.equal(cutOff, 0, `taken for cut off at the end of ${cutOff} of ${turns} busy turns`);
  } finally {
    await fleet.stop();
    await redis.stop();
  }
});
