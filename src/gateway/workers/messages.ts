/**
 * What the primary and its workers say to each other about purges over the cluster's IPC channel
 * (besides prom-client's own metric requests). A purge taken by the primary (purge API, event)
 * goes to one worker as an order; a worker that takes a purge (that order, an invalidation, a
 * validation's retire) asks the primary to relay it to the other workers, which only apply it.
 * Each is answered with the number of entries purged. On a reload the primary hands every worker
 * the configuration it loaded and validated.
 */
import type { Config } from '../../config/schema.ts';
import type { Purge } from '../purge/purge-log.ts';
import type { PurgeCause } from '../purge/purger.ts';

/** Primary → worker: take this purge (apply it, relay it to the other workers, send it to the fleet). */
export interface PurgeOrder {
  readonly type: 'catalog-gateway:purge';
  readonly id: number;
  readonly purge: Purge;
  readonly cause: PurgeCause;
}

/** Primary → worker: apply this purge another worker took, here only. */
export interface ApplyOrder {
  readonly type: 'catalog-gateway:apply';
  readonly id: number;
  readonly purge: Purge;
}

/** Worker → primary: hand this purge to every other worker. */
export interface RelayRequest {
  readonly type: 'catalog-gateway:relay';
  readonly id: number;
  readonly purge: Purge;
}

/** The answer to any of the three, by its id: entries purged. */
export interface Purged {
  readonly type: 'catalog-gateway:purged';
  readonly id: number;
  readonly purged: number;
}

export type PurgeMessage = PurgeOrder | ApplyOrder | RelayRequest | Purged;

const TYPES: ReadonlySet<unknown> = new Set(['catalog-gateway:purge', 'catalog-gateway:apply', 'catalog-gateway:relay', 'catalog-gateway:purged']);

/** The `type` of an IPC message, which may be anyone's (prom-client's metric requests share the channel). */
export function typeOf(message: unknown): unknown {
  return typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
}

export function isPurgeMessage(message: unknown): message is PurgeMessage {
  return TYPES.has(typeOf(message));
}

/** How long an asker waits for an answer: a process that dies while asked never gives one. */
export const ANSWER_MS = 5000;

/** The other end of the channel: a worker, seen from the primary, or the primary, seen from a worker. */
export interface Peer {
  send(message: { readonly type: string }): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A message to ask with: the asker numbers it. */
export type Question = Omit<PurgeOrder, 'id'> | Omit<ApplyOrder, 'id'> | Omit<RelayRequest, 'id'>;

/** What answers a kind of question: which messages are its answers, and what counts as none. */
export interface Answers<T> {
  /** The asker's id and the value of an answer, or undefined for any other message. */
  of(message: unknown): { readonly id: number; readonly value: T } | undefined;
  /** The value when no answer comes in time or the peer goes away. */
  readonly none: T;
  readonly timeoutMs: number;
}

/** Entries purged, 0 when unanswered. */
const PURGED: Answers<number> = {
  of: (message) => (isPurgeMessage(message) && message.type === 'catalog-gateway:purged' ? { id: message.id, value: message.purged } : undefined),
  none: 0,
  timeoutMs: ANSWER_MS,
};

/**
 * Asks one peer and hands each answer to the asker of the same id, or `none` when none comes in
 * time or the peer goes away. However many questions are out, it listens to the peer once (none
 * while none is out): a listener per question would pile up on `process`, past Node's leak warning
 * at eleven concurrent invalidations.
 */
export class Asker<T = number, Q extends { readonly type: string } = Question> {
  readonly #peer: Peer;
  readonly #answers: Answers<T>;
  readonly #waiting = new Map<number, (value: T) => void>();
  #ids = 0;

  constructor(peer: Peer, answers: Answers<T> = PURGED as unknown as Answers<T>) {
    this.#peer = peer;
    this.#answers = answers;
  }

  ask(question: Q): Promise<T> {
    const id = ++this.#ids;
    return new Promise<T>((resolve) => {
      const timer = setTimeout(() => {
        this.#answer(id, this.#answers.none);
      }, this.#answers.timeoutMs);
      if (this.#waiting.size === 0) this.#peer.on('message', this.#onMessage);
      this.#waiting.set(id, (value) => {
        clearTimeout(timer);
        resolve(value);
      });
      this.#peer.send({ ...question, id });
    });
  }

  /** The peer went away: nothing it was asked will be answered. */
  gone(): void {
    for (const id of [...this.#waiting.keys()]) this.#answer(id, this.#answers.none);
  }

  readonly #onMessage = (message: unknown): void => {
    const answer = this.#answers.of(message);
    if (answer !== undefined) this.#answer(answer.id, answer.value);
  };

  #answer(id: number, value: T): void {
    const resolve = this.#waiting.get(id);
    if (resolve === undefined) return;
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#peer.off('message', this.#onMessage);
    resolve(value);
  }
}

/** Primary → worker: the configuration a reload loaded and validated; what is live applies. */
export interface ConfigOrder {
  readonly type: 'catalog-gateway:config';
  readonly config: Config;
}

export function isConfigOrder(message: unknown): message is ConfigOrder {
  return typeOf(message) === 'catalog-gateway:config';
}

/**
 * Worker → primary: its API listener could not listen (the port in use, say). The primary says
 * so once, for all of them, and stops them: a replacement would only fail the same way.
 */
export interface ListenFailure {
  readonly type: 'catalog-gateway:cannot-listen';
  readonly code: string;
  readonly address: string;
  readonly port: number;
}

/** The ListenFailure that a listen error is, or undefined for any other failure. */
export function listenFailure(err: unknown): ListenFailure | undefined {
  const { code, address, port, syscall } = err as { code?: unknown; address?: unknown; port?: unknown; syscall?: unknown };
  if (syscall !== 'listen' && syscall !== 'bind') return undefined;
  if (typeof code !== 'string' || typeof address !== 'string' || typeof port !== 'number') return undefined;
  return { type: 'catalog-gateway:cannot-listen', code, address, port };
}

export function isListenFailure(message: unknown): message is ListenFailure {
  return typeOf(message) === 'catalog-gateway:cannot-listen';
}
