/**
 * `gateway.workers` > 1: the primary process of node:cluster. It forks the workers, which share
 * the API port, replaces a worker that dies, and drains them all on SIGTERM. By default the
 * primary accepts each connection and sends it to the next worker over the IPC channel
 * (node:cluster's round robin), which spreads them evenly; with `gateway.workerAccept: workers` it
 * opens the listening socket and hands it to every worker, and each accepts its own connections
 * from it (`SCHED_NONE`, the kernel's shared accept queue), which spares each connection the
 * hand-off, 15–20 % of a resumed TLS connection's CPU (docs/benchmarks.md, "TLS session
 * resumption"). A worker that drains closes its copy of the socket, and the connections still
 * queued go to the others. With `reuseport` each worker listens on a socket of its own while the
 * primary holds the port (reuse-port.ts), so a connection wakes one worker instead of all.
 * On SIGHUP it loads and validates the configuration and hands it to them (reload/live-config.ts);
 * on SIGUSR2 it replaces them one at a time (rolling-restart.ts).
 * It answers the admin port for all of them: `/metrics` sums their metrics (prom-client's
 * AggregatorRegistry), `/readyz` asks that workers are listening and the origin is up. Every purge
 * it takes, from the purge API or an event, and every purge a worker takes (an invalidation) is
 * applied by every worker (messages.ts); with a shared tier the worker that took it also sends it
 * to the rest of the fleet.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism, hostname } from 'node:os';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { openAdmin, processParts } from '../process-parts.ts';
import { resumption } from '../events/resume.ts';
import { claim, diskPath } from '../store/disk/disk-store.ts';
import type { PurgeCause, PurgeTaker } from '../purge/purger.ts';
import type { ReloadOutcome } from '../reload/live-config.ts';
import type { PurgeSelector } from '../purge/purge-log.ts';
import { shareTicketKeys } from '../listeners/ticket-keys.ts';
import { Asker, isListenFailure, isPurgeMessage, type ConfigOrder, type ListenFailure, type Purged, type Question } from './messages.ts';
import { HOST_LOCK_MS, HostLocks } from './host-locks.ts';
import { retire, rollWorkers } from './rolling-restart.ts';
import { answerOwnSocketWorker, holdApiPort, migratesQueuedConnections, type HeldPort } from './reuse-port.ts';

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
  /** Loads and validates with `load`, applies what is live here and hands it to every worker. */
  reload(load: () => Config): ReloadOutcome;
  /** Replaces the workers one at a time (rolling-restart.ts); false when it stopped short. */
  roll(): Promise<boolean>;
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

/** `workerArgs`: the command line the workers run, when not this process's own (`catalog-gateway fleet`). */
export async function startPrimary(config: Config, count: number, workerArgs?: readonly string[]): Promise<RunningPrimary> {
  // Read by node:cluster as it sets up, before the first fork.
  cluster.schedulingPolicy = config['gateway.workerAccept'] === 'workers' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  if (workerArgs !== undefined) cluster.setupPrimary({ args: [...workerArgs] });
  // The host's disk tier is this gateway's for all its workers: taken before any is forked, so a
  // second gateway pointed at it is refused at once rather than worker by worker.
  const releaseDisk = config['gateway.cache.disk.enabled'] ? claim(diskPath(config), process.pid) : undefined;
  // The workers sharing it take turns at a key's fill under the primary's locks.
  const hostLocks = releaseDisk === undefined ? undefined : new HostLocks(HOST_LOCK_MS);
  const parts = processParts(config, { registry: new PrimaryRegistry() });
  const { logger, registry, health } = parts;
  const live = new Set<Worker>();
  const askers = new Map<Worker, Asker>();
  const listening = new Set<Worker>();
  const startedAt = new Map<Worker, number>();
  // The rolling restart's own: new workers until they listen (one that dies stops the restart),
  // and old ones being retired (one killed past its drain deadline is not a death to replace).
  const rolling = new Set<Worker>();
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
  // start at all (the port in use, say) would only die again if replaced. A worker that could not
  // listen says why before it exits, so that the primary reports the port once, not each worker.
  let cannotListen: ListenFailure | undefined;
  let listened: (url: string) => void = () => undefined;
  let neverListened: (err: Error) => void = () => undefined;
  const firstUrl = new Promise<string>((resolve, reject) => {
    listened = resolve;
    neverListened = reject;
  });
  const fork = (): Worker => {
    const worker = cluster.fork();
    // A message sent to a worker that has just died, before the primary has read its channel's
    // end, fails with EPIPE (a scrape asks every worker); Node reports that as an 'error' on the
    // worker, which unheard would take the primary and every worker down with it. The death
    // itself is handled on 'exit'.
    worker.on('error', (err) => {
      logger.warn({ pid: worker.process.pid, err: err.message }, 'a message to a worker failed');
    });
    live.add(worker);
    askers.set(worker, new Asker(worker));
    startedAt.set(worker, Date.now());
    worker.on('listening', (address) => {
      listening.add(worker);
      anyListened = true;
      if (listening.size === count) listened(`${config['http.tls.cert'] === null ? 'http' : 'https'}://${config['gateway.host']}:${address.port}`);
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    hostLocks?.gone(worker);
    live.delete(worker);
    askers.get(worker)?.gone();
    askers.delete(worker);
    listening.delete(worker);
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    // A worker that stopped on its own after a signal (code 0) was asked to; only a death is replaced.
    if (rolling.delete(worker) || stopping || code === 0) return;
    if (!anyListened) {
      stopping = true;
      neverListened(
        cannotListen === undefined
          ? new Error(`a gateway worker exited (${signal || `code ${String(code)}`}) before listening; its log says why`)
          : Object.assign(
              new Error(`a gateway worker cannot listen on ${cannotListen.address}:${String(cannotListen.port)} (${cannotListen.code})`),
              cannotListen,
            ),
      );
      return;
    }
    respawnDelay = lived < QUICK_DEATH_MS ? Math.min(MAX_RESPAWN_DELAY_MS, Math.max(250, respawnDelay * 2)) : 0;
    logger.error({ pid: worker.process.pid, code, signal, respawnInMs: respawnDelay }, 'a worker died; replacing it');
    restarts.inc();
    setTimeout(() => {
      if (!stopping) fork();
    }, respawnDelay).unref();
  });

  const connected = (): Worker[] => [...live].filter((w) => w.isConnected());
  const ask = (worker: Worker, question: Question): Promise<number> => askers.get(worker)?.ask(question) ?? Promise.resolve(0);
  // A purge the primary takes goes to one worker, which applies it, has it relayed to the others
  // (below) and sends it to the fleet, as it would an invalidation of its own.
  const purger: PurgeTaker = {
    purge: async (selector: PurgeSelector, soft: boolean, cause: PurgeCause) => {
      const [worker] = connected();
      if (worker === undefined) return 0;
      return ask(worker, { type: 'catalog-gateway:purge', purge: { selector, soft, at: Date.now() }, cause });
    },
  };
  cluster.on('message', (from, message: unknown) => {
    if (hostLocks?.heard(from, message) === true) return;
    if (ownSockets !== undefined && answerOwnSocketWorker(ownSockets, from, message)) return;
    if (isListenFailure(message)) cannotListen ??= message;
    if (!isPurgeMessage(message) || message.type !== 'catalog-gateway:relay') return;
    const others = connected().filter((w) => w !== from);
    void Promise.all(others.map((w) => ask(w, { type: 'catalog-gateway:apply', purge: message.purge }))).then((purged) => {
      if (from.isConnected()) from.send({ type: 'catalog-gateway:purged', id: message.id, purged: purged.reduce((a, b) => a + b, 0) } satisfies Purged);
    });
  });

  // Workers forked later load the file themselves; the running ones are handed what was validated here.
  parts.live.add({
    prepare(next) {
      return () => {
        for (const worker of live) if (worker.isConnected()) worker.send({ type: 'catalog-gateway:config', config: next } satisfies ConfigOrder);
      };
    },
  });
  // The admin listener opens first: a port it cannot have stops the gateway before any worker serves.
  const admin = await openAdmin(parts, {
    purger,
    notReadyReason: () => {
      if (stopping) return 'the gateway is shutting down';
      if (listening.size === 0) return 'no worker is listening yet';
      return health.reason;
    },
    degradedReason: () => (listening.size < count ? `${listening.size} of ${count} workers are listening` : undefined),
    // The admin listener's refusals are logged; the refusal counter is the workers', for the API port.
    countRefusal: () => undefined,
  });
  // Workers that listen on sockets of their own listen where the primary holds the port (reuse-port.ts).
  let ownSockets: HeldPort | undefined;
  if (config['gateway.workerAccept'] === 'reuseport') {
    ownSockets = await holdApiPort(config['gateway.host'], config['gateway.port']).catch(async (err: unknown) => {
      await admin.stop();
      hostLocks?.stop();
      releaseDisk?.();
      throw err;
    });
    if (!migratesQueuedConnections())
      logger.warn(
        { port: ownSockets.port },
        'gateway.workerAccept is reuseport and net.ipv4.tcp_migrate_req is not 1: a worker that drains (a rolling restart) resets the connections still queued on its socket',
      );
  }
  const drainDeadlineMs = config['http.shutdownTimeoutMs'] + 5000;
  // One TLS session ticket key for all the workers (listeners/ticket-keys.ts).
  const ticketKeys = config['http.tls.cert'] === null ? undefined : shareTicketKeys(config['http.tls.ticketKeyRotationMs']);
  for (let i = 0; i < count; i++) fork();
  const started = firstUrl.catch(async (err: unknown) => {
    // None serves, so the rest are stopped with it: no worker outlives a primary that failed to start.
    stopping = true;
    await Promise.all([...live].map((worker) => retire(worker, drainDeadlineMs)));
    await Promise.all([admin.stop(), health.close()]);
    ticketKeys?.stop();
    hostLocks?.stop();
    ownSockets?.release();
    releaseDisk?.();
    throw err;
  });
  await health.start();
  const url = await started;
  // Each worker replayed what was missed before it listened; the primary, which answers the
  // events, keeps reading the log as a backstop.
  const resume = resumption(config, { purger, registry, logger, now: parts.now });
  resume?.poll();
  logger.info({ url, adminUrl: admin.url, workers: count, pid: process.pid }, 'listening');
  // One at a time: a second signal during a restart waits for the one under way.
  let restarting: Promise<boolean> | undefined;

  return {
    url,
    adminUrl: admin.url,
    reload: (load) => parts.live.reload(load),
    roll() {
      restarting ??= rollWorkers({
        workers: [...live],
        fork: () => {
          const worker = fork();
          rolling.add(worker);
          worker.once('listening', () => rolling.delete(worker));
          return worker;
        },
        drain: (worker) => {
          rolling.add(worker);
          return retire(worker, drainDeadlineMs);
        },
        stopping: () => stopping,
        logger,
      }).finally(() => {
        restarting = undefined;
      });
      return restarting;
    },
    async stop() {
      stopping = true;
      ticketKeys?.stop();
      await Promise.all([...live].map((worker) => retire(worker, drainDeadlineMs)));
      await Promise.all([admin.stop(), health.close(), resume?.stop()]);
      hostLocks?.stop();
      ownSockets?.release();
      releaseDisk?.();
      logger.info('stopped');
      logger.flush();
    },
  };
}
