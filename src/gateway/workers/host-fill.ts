/**
 * A worker's side of the host's fill locks (host-locks.ts, kept by the primary): the fill lock
 * (../fill/fill-lock.ts) of the workers sharing the host's disk tier. The entry a fill makes is
 * committed to the disk tier before its lock is let go, so a worker woken by the release finds it
 * there; a worker that cannot reach the primary fills on its own.
 */
import { answersAsIs, LockWaits, type FillLockAttempt, type FillRole, type FillWait, type SharedFill } from '../fill/fill-lock.ts';
import type { FillRequest } from '../fill/fetch.ts';
import type { DiskStore } from '../store/disk/disk-store.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import type { StoredResponse } from '../store/stored-response.ts';
import type { FillStamp } from '../store/tier.ts';
import { HOST_LOCK_MS, isLockAnswer, isLockEnd, type LockHolding, type LockQuestion } from './host-locks.ts';
import { Asker } from './messages.ts';

/** Last resort: the longest a worker waits for another's fill (renewed however often) before asking the origin itself. */
const WAIT_MS = 10_000;
/** The primary answers at once; one that does not within this long is not keeping locks. */
const ANSWER_MS = 1000;

export interface HostFillOptions {
  readonly disk: DiskStore;
  readonly now: () => number;
}

const PRIMARY = {
  send: (message: { readonly type: string }) => process.send?.(message),
  on: (event: 'message', listener: (message: unknown) => void) => process.on(event, listener),
  off: (event: 'message', listener: (message: unknown) => void) => process.off(event, listener),
};

export class HostFill implements SharedFill {
  readonly tier = 'disk';
  readonly #o: HostFillOptions;
  readonly #primary = new Asker<number | undefined, LockQuestion>(PRIMARY, {
    of: (message) => (isLockAnswer(message) ? { id: message.id, value: message.ms } : undefined),
    none: undefined,
    timeoutMs: ANSWER_MS,
  });
  readonly #waits = new LockWaits((key) => this.#primary.ask({ type: 'catalog-gateway:fill-lock', op: 'left', key, token: 0 }), WAIT_MS);
  #listening = false;
  #tokens = 0;

  constructor(options: HostFillOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#listening) return;
    this.#listening = true;
    process.on('message', this.#onMessage);
    process.on('disconnect', this.#onDisconnect);
  }

  stop(): void {
    this.#listening = false;
    process.off('message', this.#onMessage);
    process.off('disconnect', this.#onDisconnect);
    this.#waits.settleAll();
  }

  get usable(): boolean {
    return this.#listening && process.connected;
  }

  find(request: FillRequest, stored: StoredResponse | undefined): Promise<StoredResponse | undefined> {
    const response = this.#o.disk.lookAgain(request.key, request.requestHeaders);
    return Promise.resolve(response !== undefined && answersAsIs(response, request, stored, this.#o.now()) ? response : undefined);
  }

  async lock(key: CacheKey): Promise<FillLockAttempt> {
    const token = ++this.#tokens;
    const ms = await this.#primary.ask({ type: 'catalog-gateway:fill-lock', op: 'take', key, token });
    if (ms === undefined) return { kind: 'unknown' };
    if (ms > 0) return { kind: 'taken', remainingMs: ms };
    const holding = (op: LockHolding['op']): void => {
      if (process.connected) process.send?.({ type: 'catalog-gateway:fill-lock-held', op, key, token } satisfies LockHolding);
    };
    const renewal = setInterval(
      () => {
        holding('renew');
      },
      Math.floor(HOST_LOCK_MS / 3),
    );
    renewal.unref();
    return {
      kind: 'held',
      release: () => {
        clearInterval(renewal);
        holding('release');
        return Promise.resolve();
      },
    };
  }

  waitFor(key: CacheKey, remainingMs: number): FillWait {
    return this.#waits.waitFor(key, remainingMs);
  }

  /** Commits the fill to disk now, with the turn's other writes, rather than at the end of the turn. */
  async write(key: CacheKey, response: StoredResponse, stamp: FillStamp): Promise<void> {
    const committed = this.#o.disk.put(key, response, stamp);
    this.#o.disk.flush();
    await committed;
  }

  counted(role: FillRole): void {
    this.#o.disk.metrics.hostFill(role);
  }

  readonly #onMessage = (message: unknown): void => {
    if (isLockEnd(message)) this.#waits.settle(message.key as CacheKey, message.end);
  };

  readonly #onDisconnect = (): void => {
    this.#waits.settleAll();
  };
}
