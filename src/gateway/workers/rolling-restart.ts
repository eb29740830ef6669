/**
 * Replacing a primary's workers one at a time (SIGUSR2), so that new code or a configuration
 * that needs a restart goes live without dropping a request (nginx's binary upgrade, one worker
 * at a time): fork the new worker, wait until it listens, then ask the old one to stop. The old
 * one drains (gateway.ts `stop`, lifecycle.ts `drain`): its listener closes first, so it takes no
 * more connections (from the shared socket, the others accept those queued; under round robin,
 * node:cluster hands one already on its way back to go to another worker), in-flight requests finish, and its keep-alive connections close after an answer
 * with `Connection: close` rather than under a request. Only then is the next one replaced.
 */
import type { Worker } from 'node:cluster';
import type { Logger } from '../../shared/logger.ts';

/** A new worker that is not listening by then (say, the origin probe or Redis hangs) is given up on. */
const START_MS = 60_000;

/** Resolves true once `worker` listens; false when it exits, or is killed for not listening in time. */
function listens(worker: Worker): Promise<boolean> {
  return new Promise((resolve) => {
    const late = setTimeout(() => worker.process.kill('SIGKILL'), START_MS);
    const settle = (listening: boolean): void => {
      clearTimeout(late);
      worker.off('listening', onListening);
      worker.off('exit', onExit);
      resolve(listening);
    };
    const onListening = (): void => {
      settle(true);
    };
    const onExit = (): void => {
      settle(false);
    };
    worker.once('listening', onListening);
    worker.once('exit', onExit);
  });
}

/** Asks a worker to stop (SIGTERM: it drains) and kills it if it has not exited by `deadlineMs`. */
export function retire(worker: Worker, deadlineMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (worker.isDead()) {
      resolve();
      return;
    }
    const kill = setTimeout(() => worker.process.kill('SIGKILL'), deadlineMs);
    worker.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    worker.process.kill('SIGTERM');
  });
}

export interface Rollover {
  /** The workers to replace, as they were when the restart began. */
  readonly workers: readonly Worker[];
  /** Forks one new worker. */
  readonly fork: () => Worker;
  /** Asks an old worker to stop (`retire`); resolves once it has exited. */
  readonly drain: (worker: Worker) => Promise<void>;
  /** True once the primary stops: the restart ends where it is. */
  readonly stopping: () => boolean;
  readonly logger: Logger;
}

/** Replaces the workers one at a time; false when a new one failed to listen (the old ones it would have replaced keep serving). */
export async function rollWorkers({ workers, fork, drain, stopping, logger }: Rollover): Promise<boolean> {
  logger.info({ workers: workers.length }, 'rolling restart: replacing the workers one at a time');
  for (const [i, old] of workers.entries()) {
    if (stopping()) return false;
    if (old.isDead()) continue;
    const next = fork();
    if (!(await listens(next))) {
      logger.error(
        { pid: next.process.pid, replaced: i, left: workers.length - i },
        'rolling restart stopped: a new worker exited before listening (its log says why); the workers not yet replaced keep serving',
      );
      return false;
    }
    await drain(old);
    logger.info({ old: old.process.pid, new: next.process.pid }, 'rolling restart: worker replaced');
  }
  logger.info('rolling restart done');
  return true;
}
