/**
 * `gateway.workers` > 1: the primary process of node:cluster. It forks the workers, which share
 * the API port (the primary accepts connections and hands them round-robin to the workers, the
 * default scheduling on Linux), replaces a worker that dies, and drains them all on SIGTERM.
 * It answers the admin port for all of them: `/metrics` sums their metrics (prom-client's
 * AggregatorRegistry), `/readyz` asks that workers are listening and the origin is up, and every
 * purge it takes, from the purge API or an event, is handed to every worker. With a shared tier
 * one worker also sends it to the rest of the fleet.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism, hostname } from 'node:os';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { parseCredentialNames } from '../../shared/credentials.ts';
import { httpLimits, reportRefusals } from '../../shared/http-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createVerifier } from '../../shared/signing-key.ts';
import { startAdmin } from '../admin.ts';
import { cacheKeyOf } from '../pipeline.ts';
import type { PurgeTaker } from '../purge/purger.ts';
import { RouteTable } from '../routes/route-table.ts';
import type { PurgeSelector } from '../store/purge-log.ts';
import { OriginHealth } from '../upstream/origin-health.ts';
import { isPurgeDone, type PurgeOrder } from './messages.ts';

export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/** The fleet group of the workers of one primary: they skip each other's purges on the stream. */
export function workerGroup(primaryPid: number): string {
  return `${hostname()}:${primaryPid}:workers`;
}

export interface RunningPrimary {
  /** The API port's URL, as the workers report it once all of them listen. */
  readonly url: string;
  readonly adminUrl: string;
  stop(): Promise<void>;
}

/** `/metrics`: the workers' metrics summed, followed by the primary's own. */
class PrimaryRegistry extends Registry {
  readonly #workers = new AggregatorRegistry();

  override async metrics(): Promise<string> {
    // A worker that dies while asked never answers, and prom-client then fails the whole scrape
    // after 5 s; asked again, only the workers still connected are asked.
    const workers = await this.#workers.clusterMetrics().catch(() => this.#workers.clusterMetrics());
    const own = await super.metrics();
    return `${workers.trimEnd()}\n${own}`;
  }
}

/** A worker that dies within this long of its start is crash-looping: its replacement waits. */
const QUICK_DEATH_MS = 2000;
const MAX_RESPAWN_DELAY_MS = 10_000;
const PURGE_ANSWER_MS = 5000;

/** `workerArgs`: the command line the workers run, when not this process's own (`catalog-gateway fleet`). */
export async function startPrimary(config: Config, count: number, workerArgs?: readonly string[]): Promise<RunningPrimary> {
  if (workerArgs !== undefined) cluster.setupPrimary({ args: [...workerArgs] });
  const logger = createLogger(config, 'catalog-gateway');
  const registry = new PrimaryRegistry();
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  const startedAt = new Map<Worker, number>();
  let stopping = false;
  let respawnDelay = 0;
  let anyListened = false;
  new Gauge({
    name: 'catalog_gateway_workers',
    help: 'Worker processes listening on the API port (gateway.workers).',
    registers: [registry],
    collect() {
      this.set(listening.size);
    },
  });
  const restarts = new Counter({ name: 'catalog_gateway_worker_restarts_total', help: 'Workers that died and were replaced.', registers: [registry] });

  // Settled once every worker listens, or by a worker that dies before any has: one that cannot
  // start at all (the port in use, say) would only die again if replaced.
  let listened: (url: string) => void = () => undefined;
  let neverListened: (err: Error) => void = () => undefined;
  const firstUrl = new Promise<string>((resolve, reject) => {
    listened = resolve;
    neverListened = reject;
  });
  const fork = (): void => {
    const worker = cluster.fork();
    live.add(worker);
    startedAt.set(worker, Date.now());
    worker.on('listening', (address) => {
      listening.add(worker);
      anyListened = true;
      if (listening.size === count) listened(`${config['http.tls.cert'] === null ? 'http' : 'https'}://${config['gateway.host']}:${address.port}`);
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    listening.delete(worker);
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    // A worker that stopped on its own after a signal (code 0) was asked to; only a death is replaced.
    if (stopping || code === 0) return;
    if (!anyListened) {
      stopping = true;
      neverListened(new Error(`a gateway worker exited (${signal || `code ${String(code)}`}) before listening; its log says why`));
      return;
    }
    respawnDelay = lived < QUICK_DEATH_MS ? Math.min(MAX_RESPAWN_DELAY_MS, Math.max(250, respawnDelay * 2)) : 0;
    logger.error({ pid: worker.process.pid, code, signal, respawnInMs: respawnDelay }, 'a worker died; replacing it');
    restarts.inc();
    setTimeout(() => {
      if (!stopping) fork();
    }, respawnDelay).unref();
  });

  let purgeIds = 0;
  const shared = config['gateway.redis.url'] !== null;
  const purger: PurgeTaker = {
    purge: (selector: PurgeSelector, soft: boolean) => {
      const workers = [...live].filter((w) => w.isConnected());
      const answers = workers.map(
        (worker, i) =>
          new Promise<number>((resolve) => {
            const id = ++purgeIds;
            const timer = setTimeout(() => {
              finish(0);
            }, PURGE_ANSWER_MS);
            const onMessage = (message: unknown): void => {
              if (isPurgeDone(message) && message.id === id) finish(message.purged);
            };
            const finish = (purged: number): void => {
              clearTimeout(timer);
              worker.off('message', onMessage);
              worker.off('exit', onExit);
              resolve(purged);
            };
            const onExit = (): void => {
              finish(0);
            };
            worker.on('message', onMessage);
            worker.once('exit', onExit);
            worker.send({ type: 'catalog-gateway:purge', id, selector, soft, fanOut: shared && i === 0 } satisfies PurgeOrder);
          }),
      );
      return Promise.all(answers).then((purged) => purged.reduce((a, b) => a + b, 0));
    },
  };

  const health = new OriginHealth(new URL(config['gateway.upstream.probe'], config['gateway.origin']), config['gateway.upstream.probeIntervalMs']);
  const routes = new RouteTable(config['gateway.routes'], config['auth.requiredScope']);
  const credentialNames = parseCredentialNames(config['http.credentialParameters']);
  for (let i = 0; i < count; i++) fork();
  await health.start();
  const url = await firstUrl;
  const admin = await startAdmin({
    config,
    logger,
    registry,
    verifier: createVerifier(config, Date.now),
    purger,
    keyOf: (url) => cacheKeyOf(routes, url, config['http.maxTargetBytes']),
    notReadyReason: () => {
      if (stopping) return 'the gateway is shutting down';
      if (listening.size === 0) return 'no worker is listening yet';
      return health.reason;
    },
    degradedReason: () => (listening.size < count ? `${listening.size} of ${count} workers are listening` : undefined),
    limits: httpLimits(config),
    // The admin listener's refusals are logged; the refusal counter is the workers', for the API port.
    onRefused: reportRefusals(logger, credentialNames, () => undefined),
    now: Date.now,
  });
  logger.info({ url, adminUrl: admin.url, workers: count }, 'listening');

  return {
    url,
    adminUrl: admin.url,
    async stop() {
      stopping = true;
      const deadline = config['http.shutdownTimeoutMs'] + 5000;
      const exits = [...live].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) {
              resolve();
              return;
            }
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), deadline);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      );
      await Promise.all(exits);
      await Promise.all([admin.stop(), health.close()]);
      logger.info('stopped');
      logger.flush();
    },
  };
}
