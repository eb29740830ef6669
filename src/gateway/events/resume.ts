/**
 * A restart with a warm disk tier is a partition (docs/caching.md, "After downtime"): while the
 * gateway was down, loans went on and the origin's events about them went unheard, so what the
 * disk tier kept may be stale however fresh it looks. Before a serving process answers from it,
 * it replays the origin's event log from the last event the host applied (the cursor, kept beside
 * the disk tier); when the log cannot say what was missed (a gap, an unreachable origin, a cursor
 * lost while entries were kept), every entry is marked stale from now, so each is revalidated
 * before it is served again — a 304 costs the origin little and serves nothing stale. The process
 * answering events then polls the log as a backstop to the webhooks, and treats a gap found
 * while running the same way.
 *
 * Only a gateway that registers for events and keeps a disk tier does this: without events a
 * cache has nothing to miss, and without the disk tier nothing outlives the process.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { registrationToken } from '../admin.ts';
import type { PurgeTaker } from '../purge/purger.ts';
import { diskPath } from '../store/disk/disk-store.ts';
import { CatchUpMetrics } from './catch-up-metrics.ts';
import { EventCatchUp, type CatchUpOutcome } from './catch-up.ts';

/**
 * The seq of the last origin event the host applied, in a file beside the disk tier: every
 * process of the host reads it at start, and whoever advances it writes it whole (a rename), so a
 * kill leaves the old value or the new one, and a lower value never replaces a higher one.
 */
export class EventCursor {
  readonly #file: string;

  constructor(dir: string) {
    this.#file = join(dir, 'events-cursor');
  }

  read(): number | undefined {
    try {
      const cursor = Number(readFileSync(this.#file, 'utf8'));
      return Number.isSafeInteger(cursor) && cursor >= 0 ? cursor : undefined;
    } catch {
      return undefined;
    }
  }

  /** Records `cursor`; `rewind` for a gap, where the origin's log starts again lower (a new database). */
  write(cursor: number, rewind = false): void {
    const known = this.read();
    if (!rewind && known !== undefined && known >= cursor) return;
    const next = `${this.#file}.${process.pid}`;
    writeFileSync(next, String(cursor));
    renameSync(next, this.#file);
  }
}

export interface Resumption {
  /** Replays what was missed, before the process serves (see the module's comment). */
  atStart(holdsEntries: boolean): Promise<void>;
  /** Polls the log from now on (`gateway.events.pollMs`): for the process that answers events. */
  poll(): void;
  stop(): Promise<void>;
}

export interface ResumptionParts {
  readonly purger: PurgeTaker;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly now: () => number;
}

/** What a gateway with this configuration does after downtime; undefined when it has nothing to do. */
export function resumption(config: Config, parts: ResumptionParts): Resumption | undefined {
  if (!config['gateway.cache.disk.enabled'] || !config['gateway.events.register']) return undefined;
  const { purger, logger, now } = parts;
  const cursor = new EventCursor(diskPath(config));
  const catchUp = new EventCatchUp({
    origin: config['gateway.origin'],
    token: registrationToken(config),
    purger,
    soft: config['gateway.events.softPurge'],
    metrics: new CatchUpMetrics(parts.registry),
    logger,
    now,
  });
  /** Every entry stale from now: what the log cannot account for is revalidated before reuse. */
  const revalidateAll = async (why: string): Promise<void> => {
    logger.warn({ why }, 'events missed while the gateway could not hear them cannot be replayed: every stored entry is revalidated before it is served again');
    await purger.purge({ kind: 'all' }, true, { kind: 'event', id: `missed-${now()}` });
  };
  const settle = async (outcome: CatchUpOutcome, unaccounted: boolean): Promise<void> => {
    if (outcome.kind === 'unreachable') return revalidateAll("the origin's event log could not be read");
    cursor.write(outcome.cursor, outcome.kind === 'gap');
    if (outcome.kind === 'gap') return revalidateAll("the origin's event log no longer reaches the last event applied");
    if (unaccounted) return revalidateAll('the disk tier holds entries but no record of the last event applied');
    return undefined;
  };
  return {
    async atStart(holdsEntries) {
      const after = cursor.read();
      await settle(await catchUp.catchUp(after), after === undefined && holdsEntries);
    },
    poll() {
      catchUp.start(
        cursor.read(),
        (at, outcome) => {
          void settle(outcome === 'gap' ? { kind: 'gap', cursor: at } : { kind: 'caught-up', cursor: at }, false);
        },
        config['gateway.events.pollMs'],
      );
    },
    stop: () => catchUp.stop(),
  };
}
