/**
 * The delay on a link of the namespace test bed (bed.ts): this kernel has no netem, so each
 * namespace with servers runs this process, which listens on the namespace's outside addresses and
 * relays to the servers on its loopback, holding every chunk `DELAY_MS` each way.
 *
 *   node relay-main.ts DELAY_MS LISTEN_HOST:PORT=TARGET_PORT …
 *
 * It prints `relaying` once every listener is up, and ends with its standard input, so it never
 * outlives the process that started it.
 */
import { startSilentRelay } from '../silent-relay.ts';

const [delay = '0', ...routes] = process.argv.slice(2);
await Promise.all(
  routes.map((route) => {
    const match = /^(.+):([0-9]+)=([0-9]+)$/.exec(route);
    if (match === null) throw new Error(`a route is LISTEN_HOST:PORT=TARGET_PORT, got "${route}"`);
    const [, host = '', port = '', target = ''] = match;
    return startSilentRelay({ host: '127.0.0.1', port: Number(target) }, Number(delay), { host, port: Number(port) });
  }),
);
process.stdout.write('relaying\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
