/**
 * Where a cache hit's time goes: a `node:http` server that answers the hot URL with the gateway's
 * own modules, one part more at each level, so the bench can price each part as the difference
 * between two levels measured side by side (`npm run bench -- --ladder`):
 *
 *   0 bare         the stored response's bytes, prebuilt: the ceiling
 *   1 deliver      deliver() from the stored entry: Age, Cache-Status, X-Request-Id made per hit
 *   2 target       + the request target parsed and checked, the canonical cache key
 *   3 lookup       + the LRU lookup, Vary check and RFC 9111 reuse decision
 *   4 auth         + the bearer token checked (the verified-token cache)
 *   5 metrics      + the request counter and duration histogram
 *   6 log          + the access line (JSON, to a file)
 *
 * The gateway itself adds what is left (route table, framing and credential checks, rate-limit
 * buckets, client address, the in-flight set, the pipeline's own objects).
 *
 * Run as a child process: `node bench/hit-ladder.ts LEVEL ORIGIN_URL TARGET DATA_DIR LOG_FILE AUTHORIZATION`.
 */
import { Registry } from 'prom-client';
import { createServer } from 'node:http';
import { loadConfig } from '../src/config/load.ts';
import { cacheStatus } from '../src/gateway/cache-outcome.ts';
import { deliver } from '../src/gateway/deliver.ts';
import { compressionPolicy } from '../src/shared/encoding/policy.ts';
import { Fetcher } from '../src/gateway/fill/fetch.ts';
import { PurgeLog } from '../src/gateway/purge/purge-log.ts';
import { GatewayMetrics } from '../src/gateway/metrics.ts';
import { ttlSeconds } from '../src/gateway/rules/freshness.ts';
import { NO_DIRECTIVES, reuse } from '../src/gateway/rules/reuse.ts';
import { cacheKey } from '../src/gateway/store/memory/response-cache.ts';
import { memoryTier } from '../src/gateway/gateway.ts';
import { OriginClient } from '../src/gateway/upstream/origin-client.ts';
import { ArrivalFields, createAccessLog, roundMs } from '../src/shared/access-log.ts';
import { parseCredentialNames, redactTarget } from '../src/shared/credentials.ts';
import { createLogger } from '../src/shared/logger.ts';
import { parseRequestTarget } from '../src/shared/request-target.ts';
import { createVerifier } from '../src/shared/signing-key.ts';
import { serveAsChild } from './child-server.ts';
import { LADDER } from './ladder-levels.ts';

const [levelName = '', originUrl = '', target = '', dataDir = '', logFile = '', authorization = ''] = process.argv.slice(2);
const level = LADDER.indexOf(levelName as (typeof LADDER)[number]);
if (level < 0 || originUrl === '' || target === '')
  throw new Error(`usage: hit-ladder.ts ${LADDER.join('|')} ORIGIN_URL TARGET DATA_DIR LOG_FILE AUTHORIZATION`);

const config = loadConfig({ env: {}, overrides: { dataDir, 'gateway.origin': originUrl, 'log.destination': logFile } });
const purges = new PurgeLog();
const cache = memoryTier(config, purges);
const origin = new OriginClient(config);
const metrics = new GatewayMetrics(
  new Registry(),
  { cache: () => cache, inFlight: () => 0, fillWaiting: () => 0, originUp: () => true, originConnections: () => origin.connections },
  { gcDurations: config['gateway.metrics.gcDurations'] },
);
const verifier = createVerifier(config, Date.now);
const logger = createLogger(config, 'catalog-gateway');
const accessLog = createAccessLog(logger, { enabled: true, format: 'json', service: 'catalog-gateway' });
const maxTargetBytes = config['http.maxTargetBytes'];
const CREDENTIAL_NAMES = parseCredentialNames(config['http.credentialParameters']);
const arrivals = new ArrivalFields();

const parsed = parseRequestTarget('GET', target, maxTargetBytes);
if (!parsed.ok) throw new Error(`not a valid target: ${target}`);
const key = cacheKey(parsed.canonical);
const fetcher = new Fetcher(
  origin,
  cache.maker,
  metrics,
  Date.now,
  { header: config['gateway.purge.tagHeader'], expose: false },
  { acceptEncoding: 'identity', policy: compressionPolicy(config) },
);
const policy = { staleWhileRevalidateMs: 0, staleIfErrorMs: 0, staleIfDisconnectedMs: 0, maxHeuristicMs: 0, targetedFields: [] };
const filled = await fetcher.fetch(
  {
    key,
    origin: { method: 'GET', target: parsed.canonical, headers: { authorization } },
    requestHeaders: {},
    authorized: true,
    directives: NO_DIRECTIVES,
    policy,
    relayServerErrors: false,
    compress: false,
  },
  undefined,
);
if (filled.kind !== 'response' || !filled.stored || cache.put(key, filled.shared, { generation: purges.generation, mark: '' }) !== undefined)
  throw new Error('the hot target was not stored');
const entry = cache.lookup(key, {});
if (entry.kind !== 'found') throw new Error('the hot target is not in the cache');
const stored = entry.response;
const prebuilt = [...stored.kept.headers, 'age', '0', 'cache-status', cacheStatus({ kind: 'hit', ttl: 60 }) ?? '', 'x-request-id', 'bench'];

const server = createServer((req, res) => {
  const started = performance.now();
  if (level === 0) {
    res.writeHead(stored.status, prebuilt);
    res.end(stored.body);
    return;
  }
  let response = stored;
  let sub: string | undefined;
  if (level >= 2) {
    const verdict = parseRequestTarget('GET', req.url ?? '/', maxTargetBytes);
    if (!verdict.ok) throw new Error('bad target');
    if (level >= 3) {
      const found = cache.lookup(cacheKey(verdict.canonical), req.headers);
      if (found.kind !== 'found' || reuse(found.response, NO_DIRECTIVES, Date.now()) !== 'fresh') throw new Error('not a hit');
      response = found.response;
    }
  }
  if (level >= 4) {
    const auth = verifier.verify(req.headers.authorization, 'catalog:read');
    if (auth instanceof Promise || !auth.ok) throw new Error('the token is not remembered');
    sub = auth.principal.subject;
  }
  const now = Date.now();
  const reqId = arrivals.requestId(req.headers['x-request-id']);
  const delivered = deliver(res, response, response.kept, {
    isHead: false,
    conditions: { ifMatch: undefined, ifUnmodifiedSince: undefined, ifNoneMatch: undefined, ifModifiedSince: undefined },
    range: undefined,
    requestId: reqId,
    now,
    cacheStatus: cacheStatus({ kind: 'hit', ttl: ttlSeconds(response, now) }) ?? '',
  });
  if ('kind' in delivered) throw new Error(`an unconditional GET without Range was answered ${delivered.kind}`);
  const ms = performance.now() - started;
  if (level >= 5) metrics.request('/v1/books', 'GET', delivered.status, 'hit', ms / 1000);
  if (level >= 6) {
    accessLog({
      reqId,
      method: 'GET',
      path: redactTarget(req.url ?? '/', CREDENTIAL_NAMES),
      status: delivered.status,
      bytes: delivered.bytes,
      durationMs: roundMs(ms),
      sub,
      remote: req.socket.remoteAddress,
      ua: req.headers['user-agent'],
      proto: 'HTTP/1.1',
    });
  }
});
// A remembered token, as on the gateway after its first request with it.
await verifier.verify(authorization, 'catalog:read');
serveAsChild(server);
