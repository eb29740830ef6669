/**
 * A worker's side of purge relays, alone in a child process: on the word from its parent (which
 * plays the primary) it relays `count` purges at once and reports how many `message` listeners
 * `process` held while they were out, after they were answered, and any warning Node raised.
 */
import { relayToSiblings } from '../../src/gateway/workers/purge-relay.ts';

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(warning.name));

const onStart = (message: unknown): void => {
  const count = (message as { relay?: number }).relay;
  if (count === undefined) return;
  process.off('message', onStart);
  const relays = Array.from({ length: count }, () => relayToSiblings({ selector: { kind: 'all' }, soft: false, at: Date.now() }));
  const whileOut = process.listenerCount('message');
  void Promise.all(relays).then((purged) => {
    // A warning is emitted on the next tick.
    setImmediate(() => {
      process.send?.({ report: { whileOut, afterwards: process.listenerCount('message'), purged, warnings } });
    });
  });
};
process.on('message', onStart);
process.send?.({ ready: true });
