/** Opens the disk tier in DIR for OWNER at the instant START_AT (ms) and closes it: one of the processes of the concurrent-open test. */
import pino from 'pino';
import { Registry } from 'prom-client';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { DiskMetrics } from '../../src/gateway/store/disk-metrics.ts';
import { DiskStore } from '../../src/gateway/store/disk-store.ts';
import { EntryMaker } from '../../src/gateway/store/stored-response.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
const [dir = '', owner, startAt] = process.argv.slice(2);
// All at one instant, as the workers a primary forks together open it.
await new Promise((resolve) => setTimeout(resolve, Number(startAt) - Date.now()));
const s = new DiskStore({
  dir,
  maxBytes: 1 << 20,
  maxEntryBytes: 1 << 16,
  owner: Number(owner),
  maker: new EntryMaker(new Codec({ gzip: 1, br: 0, zstd: 1 })),
  purges: new PurgeLog(),
  metrics: new DiskMetrics(new Registry(), () => undefined),
  logger: pino({ level: 'silent' }),
  now: Date.now,
});
s.close();
