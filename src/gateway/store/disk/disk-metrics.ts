/**
 * The disk tier's metrics: what it holds (read at scrape time), what reads found, what was
 * written and evicted, its faults by kind, and how the workers sharing it took turns at fills
 * (../../workers/host-fill.ts; always 0 for a gateway without workers). Workers share one disk tier,
 * so its size is the same in each: the gauges take the maximum across workers, the counters the sum.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FillRole } from '../../fill/fill-lock.ts';
import type { TierSize } from '../tier.ts';

/** `checksum` a value that did not decode (torn, damaged); `corrupt` a database set aside; `full` no space; `io` any other failure. */
export type DiskError = 'checksum' | 'corrupt' | 'full' | 'io';

export class DiskMetrics {
  readonly #reads = { hit: 0, miss: 0 };
  readonly #writes: Counter;
  readonly #written: Counter;
  readonly #evictions: Counter;
  readonly #errors: Counter<'kind'>;
  readonly #hostFills: Counter<'role'>;

  constructor(registry: Registry, size: () => TierSize | undefined) {
    const registers = [registry];
    new Gauge({
      name: 'catalog_gateway_disk_entries',
      help: 'Entries in the disk tier.',
      registers,
      aggregator: 'max',
      collect() {
        this.set(size()?.entries ?? 0);
      },
    });
    new Gauge({
      name: 'catalog_gateway_disk_bytes',
      help: 'Bytes the disk tier counts against gateway.cache.disk.maxBytes.',
      registers,
      aggregator: 'max',
      collect() {
        this.set(size()?.bytes ?? 0);
      },
    });
    // Counted in plain numbers on the hit path and handed to prom-client when scraped: a labelled
    // increment costs a microsecond, a tenth of a disk hit's read.
    const reads = this.#reads;
    const handed = { hit: 0, miss: 0 };
    new Counter({
      name: 'catalog_gateway_disk_reads_total',
      help: 'Reads of the disk tier after a memory miss, by result (hit, miss).',
      labelNames: ['result'],
      registers,
      collect() {
        for (const result of ['hit', 'miss'] as const) {
          this.inc({ result }, reads[result] - handed[result]);
          handed[result] = reads[result];
        }
      },
    });
    this.#writes = new Counter({ name: 'catalog_gateway_disk_writes_total', help: 'Entries written to the disk tier.', registers });
    this.#written = new Counter({ name: 'catalog_gateway_disk_written_bytes_total', help: 'Bytes of entries written to the disk tier.', registers });
    this.#evictions = new Counter({
      name: 'catalog_gateway_disk_evictions_total',
      help: 'Entries the disk tier evicted to stay within gateway.cache.disk.maxBytes.',
      registers,
    });
    this.#errors = new Counter({
      name: 'catalog_gateway_disk_errors_total',
      help: 'Disk tier faults, by kind (checksum: a value that did not decode; corrupt: a database set aside; full: no space; io: other).',
      labelNames: ['kind'],
      registers,
    });
    this.#hostFills = new Counter({
      name: 'catalog_gateway_host_fills_total',
      help: "Fills for a key no worker of the host held, by role (leader, waited, lapsed: took over a lock whose holder was gone, timeout, alone: the primary's locks were out of reach).",
      labelNames: ['role'],
      registers,
    });
    for (const role of ['leader', 'waited', 'lapsed', 'timeout', 'alone']) this.#hostFills.inc({ role }, 0);
  }

  read(result: 'hit' | 'miss'): void {
    this.#reads[result]++;
  }

  written(bytes: number): void {
    this.#writes.inc();
    this.#written.inc(bytes);
  }

  evicted(n: number): void {
    this.#evictions.inc(n);
  }

  error(kind: DiskError): void {
    this.#errors.inc({ kind });
  }

  hostFill(role: FillRole): void {
    this.#hostFills.inc({ role });
  }
}
