/**
 * What the primary and its workers say to each other over the cluster's IPC channel (besides
 * prom-client's own metric requests): the primary hands every worker each purge it takes, and
 * each worker answers with how many entries it purged; on a reload the primary hands every worker
 * the configuration it loaded and validated.
 */
import type { Config } from '../../config/schema.ts';
import type { PurgeSelector } from '../store/purge-log.ts';

function hasType(message: unknown, type: string): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

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
  return hasType(message, 'catalog-gateway:purge');
}

export function isPurgeDone(message: unknown): message is PurgeDone {
  return hasType(message, 'catalog-gateway:purged');
}

export interface ConfigOrder {
  readonly type: 'catalog-gateway:config';
  readonly config: Config;
}

export function isConfigOrder(message: unknown): message is ConfigOrder {
  return hasType(message, 'catalog-gateway:config');
}
