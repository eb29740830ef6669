/**
 * A stand-in origin for the cache-memory bench, which needs a million distinct cacheable answers:
 * the real origin would spend most of the run searching. It answers any `/v1/books` target at
 * once with a small page shaped like the real one (three books, the query in the titles so every
 * body differs, about 1 KiB), a strong ETag and `Cache-Control: public, max-age=3600`.
 *
 * Run as a child process: `node bench/tiny-origin.ts`; prints the "listening" line.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { serveAsChild } from './child-server.ts';

const BRANCHES = ['branch_central', 'branch_riverside', 'branch_harbor', 'branch_old_town'];

function page(target: string): Buffer {
  const q = new URLSearchParams(target.slice(target.indexOf('?') + 1)).get('q') ?? '';
  const results = [0, 1, 2].map((i) => ({
    id: `bk_${100 + i * 7919 + q.length}`,
    title: `${q.replace(/\b\p{L}/gu, (c) => c.toUpperCase())} and the ${['Silent River', 'Hidden Garden', 'Golden Harbor'][i] ?? ''}`,
    authors: [['Amara Okafor'], ['Jonas Lindqvist', 'Mei Tanaka'], ['Lucía Fernández']][i] ?? [],
    availability: BRANCHES.slice(i, i + 2).map((branch, j) => ({ branch, available: (i + j) % 2 === 0 })),
  }));
  return Buffer.from(JSON.stringify({ results, next: null }));
}

const server = createServer((req, res) => {
  const target = req.url ?? '/';
  if (!target.startsWith('/v1/books?')) {
    res.writeHead(404, { 'content-type': 'application/problem+json', 'content-length': 2 });
    res.end('{}');
    return;
  }
  const body = page(target);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': body.length,
    'cache-control': 'public, max-age=3600',
    etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});
server.keepAliveTimeout = 60_000;
serveAsChild(server);
