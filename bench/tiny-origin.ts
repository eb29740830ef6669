/**
 * A stand-in origin for the cache-memory bench, which needs a million distinct cacheable answers:
 * the real origin would spend most of the run searching. It answers any `/v1/books` target at
 * once with a small page shaped like the real one (`limit` books, or `--books` when the target
 * names none, three by default, the query in the titles so every body differs, about 1 KiB for
 * three and 2 KB for six), a strong ETag, `Cache-Control: public,
 * max-age=3600` and, as the real origin does, the shown books' ids as `Surrogate-Key`.
 *
 * Run as a child process: `node bench/tiny-origin.ts [--books N]`; prints the "listening" line.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { serveAsChild } from './child-server.ts';

const BOOKS = Number(parseArgs({ options: { books: { type: 'string', default: '3' } } }).values.books);

const BRANCHES = ['branch_central', 'branch_riverside', 'branch_harbor', 'branch_old_town'];

function page(target: string): { body: Buffer; tags: string } {
  const params = new URLSearchParams(target.slice(target.indexOf('?') + 1));
  const q = params.get('q') ?? '';
  const limit = Math.min(Math.max(Number(params.get('limit') ?? BOOKS) || BOOKS, 1), 100);
  const results = Array.from({ length: limit }, (_, n) => {
    const i = n % 3;
    return {
      id: `bk_${100 + n * 7919 + q.length}`,
      title: `${q.replace(/\b\p{L}/gu, (c) => c.toUpperCase())} and the ${['Silent River', 'Hidden Garden', 'Golden Harbor'][i] ?? ''}`,
      authors: [['Amara Okafor'], ['Jonas Lindqvist', 'Mei Tanaka'], ['Lucía Fernández']][i] ?? [],
      availability: BRANCHES.slice(i, i + 2).map((branch, j) => ({ branch, available: (i + j) % 2 === 0 })),
    };
  });
  return { body: Buffer.from(JSON.stringify({ results, next: null })), tags: results.map((r) => r.id).join(' ') };
}

const server = createServer((req, res) => {
  const target = req.url ?? '/';
  if (!target.startsWith('/v1/books?')) {
    res.writeHead(404, { 'content-type': 'application/problem+json', 'content-length': 2 });
    res.end('{}');
    return;
  }
  const { body, tags } = page(target);
  res.writeHead(200, {
    'surrogate-key': tags,
    'content-type': 'application/json',
    'content-length': body.length,
    'cache-control': 'public, max-age=3600',
    etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});
server.keepAliveTimeout = 60_000;
serveAsChild(server);
