/**
 * A real HTTP receiver for webhook deliveries: records every request (headers and raw body) and
 * answers each with the next status of a script (then 204), so tests can make deliveries fail.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Statuses for the next requests, in order; 204 once they run out. */
  script(...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = statuses.shift() ?? 204;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.statusCode = status;
      res.end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    script: (...next) => statuses.push(...next),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
