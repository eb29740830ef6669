/**
 * A worker's side of purges (messages.ts): it takes the primary's purge orders, applies what other
 * workers took, and has the primary relay its own purges to them, so an invalidation in one worker
 * reaches every worker of the host before its answer goes out.
 */
import type { Purge } from '../purge/purge-log.ts';
import type { Purger } from '../purge/purger.ts';
import { Asker, isPurgeMessage, type Purged } from './messages.ts';

const primary = new Asker({
  send: (message) => process.send?.(message),
  on: (event, listener) => process.on(event, listener),
  off: (event, listener) => process.off(event, listener),
});

function answer(id: number, purged: number): void {
  process.send?.({ type: 'catalog-gateway:purged', id, purged } satisfies Purged);
}

/** The fan-out of a worker's Purger to the other workers of its host, through the primary. */
export function relayToSiblings(purge: Purge): Promise<number> {
  if (process.send === undefined) return Promise.resolve(0);
  return primary.ask({ type: 'catalog-gateway:relay', purge });
}

/** Acts on an order from the primary; anything else is not for it. */
export function answerPrimary(message: unknown, purger: Purger): void {
  if (!isPurgeMessage(message)) return;
  if (message.type === 'catalog-gateway:apply') answer(message.id, purger.apply(message.purge));
  else if (message.type === 'catalog-gateway:purge') {
    const { selector, soft } = message.purge;
    void purger.purge(selector, soft, message.cause).then((purged) => {
      answer(message.id, purged);
    });
  }
}
