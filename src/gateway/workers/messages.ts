/**
 * What the primary and its workers say to each other over the cluster's IPC channel (besides
 * prom-client's own metric requests): the primary hands every worker each purge it takes, and
 * each worker answers with how many entries it purged.
 */
import type { PurgeSelector } from '../store/purge-log.ts';

export interface PurgeOrder {
  readonly type: 'catalog-gateway:purge';
  readonly id: number;
  readonly selector: PurgeSelector;
  readonly soft: boolean;
  /** Whether this worker also sends it to the rest of the fleet (one worker per purge does). */
  readonly fanOut: boolean;
}

export interface PurgeDone {
  readonly type: 'catalog-gateway:purged';
  readonly id: number;
  readonly purged: number;
}

export function isPurgeOrder(message: unknown): message is PurgeOrder {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'catalog-gateway:purge';
}

export function isPurgeDone(message: unknown): message is PurgeDone {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'catalog-gateway:purged';
}
