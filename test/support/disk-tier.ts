/** A disk tier for tests, in a directory of the test's, with its own maker, purge log and metrics. */
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { DiskMetrics } from '../../src/gateway/store/disk/disk-metrics.ts';
import { DiskStore } from '../../src/gateway/store/disk/disk-store.ts';
import { EntryMaker } from '../../src/gateway/store/stored-response.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';

export interface TestDiskTier {
  readonly disk: DiskStore;
  readonly maker: EntryMaker;
  readonly purges: PurgeLog;
  /** Where the tier's metrics are, read at scrape time. */
  readonly registry: Registry;
}

export interface TestDiskTierOptions {
  /** The pid the directory is claimed for; this process by default. */
  readonly owner?: number;
  readonly maxBytes?: number;
  readonly purges?: PurgeLog;
  readonly logger?: Logger;
  /** The maker of the cache the tier is under (a gateway gives it memory's); one of its own by default. */
  readonly maker?: EntryMaker;
}

export function openDiskTier(dir: string, options: TestDiskTierOptions = {}): TestDiskTier {
  const maker = options.maker ?? new EntryMaker(new Codec({ gzip: 6, br: 5, zstd: 3 }));
  const purges = options.purges ?? new PurgeLog();
  const registry = new Registry();
  let disk: DiskStore | undefined = undefined;
  disk = new DiskStore({
    dir,
    maxBytes: options.maxBytes ?? 64 << 20,
    maxEntryBytes: 1 << 20,
    owner: options.owner ?? process.pid,
    maker,
    purges,
    metrics: new DiskMetrics(registry, () => disk?.size()),
    logger: options.logger ?? pino({ level: 'silent' }),
    now: Date.now,
  });
  return { disk, maker, purges, registry };
}
