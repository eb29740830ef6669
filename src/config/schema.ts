/**
 * Every configuration key, its type, its bounds and what it means: the one description of each
 * option. `config/default.jsonc` holds the defaults, its comments and the configuration table of
 * docs/configuration.md are generated from the `doc`s here (`npm run docs`) and held by a test.
 * The config type is derived from it, so a key cannot be read that is not declared here.
 */

interface IntegerSpec {
  readonly type: 'integer';
  readonly min: number;
  readonly max: number;
  readonly doc: string;
}
interface StringSpec {
  readonly type: 'string';
  readonly nullable?: boolean;
  readonly doc: string;
}
interface EnumSpec {
  readonly type: 'enum';
  readonly values: readonly string[];
  readonly doc: string;
}
interface BooleanSpec {
  readonly type: 'boolean';
  readonly doc: string;
}
interface UrlSpec {
  readonly type: 'url';
  readonly doc: string;
}
/** An absolute http(s) URL, or a path resolved against another URL key. */
interface UrlOrPathSpec {
  readonly type: 'url-or-path';
  readonly nullable?: boolean;
  readonly doc: string;
}
interface AddressesSpec {
  readonly type: 'addresses';
  readonly doc: string;
}
/** A count, or `auto` for one per core. */
interface WorkersSpec {
  readonly type: 'workers';
  readonly max: number;
  readonly doc: string;
}
/** A Redis URL (src/config/redis-url.ts), or null. */
interface RedisUrlSpec {
  readonly type: 'redis-url';
  readonly doc: string;
}
/** A list of tokens (comma-separated in env and flags), each one of `values` when given. */
interface ListSpec {
  readonly type: 'list';
  readonly values?: readonly string[];
  readonly doc: string;
}
interface RoutesSpec {
  readonly type: 'routes';
  readonly doc: string;
}
export type KeySpec =
  IntegerSpec | StringSpec | EnumSpec | BooleanSpec | UrlSpec | UrlOrPathSpec | AddressesSpec | WorkersSpec | RedisUrlSpec | RoutesSpec | ListSpec;

/** How a route's requests go through the gateway (docs/caching.md, "Routes"). */
export type RouteMode = 'catalog' | 'http' | 'pass';

/** One entry of `gateway.routes`; the first whose prefix matches a request's path wins. */
export interface RouteConfig {
  /** A path prefix, matched at segment boundaries: `/v1` matches `/v1` and `/v1/x`, not `/v10`. */
  readonly prefix: string;
  readonly mode: RouteMode;
  /** `required`: a valid token with `scope` on every request; `off`: no token is asked for. */
  readonly auth: 'required' | 'off';
  /** Scope the token must carry; `null` means `auth.requiredScope`. */
  readonly scope: string | null;
  /** Stale-while-revalidate window when the origin names none (Varnish's grace). */
  readonly staleWhileRevalidateSeconds: number;
  /** Stale-if-error window when the origin names none (Varnish's keep, nginx proxy_cache_use_stale). */
  readonly staleIfErrorSeconds: number;
  /** RFC 9111 §4.2.4: longest staleness served while the origin cannot be reached, closes or times out; 0 = none. */
  readonly staleIfDisconnectedSeconds: number;
  /** Whether the request's Cache-Control (no-cache, max-age, max-stale, only-if-cached…) is honoured. */
  readonly requestCacheControl: 'honour' | 'ignore';
}

const PORT = { type: 'integer', min: 0, max: 65535 } as const;
const MIB = 1024 * 1024;

export const SCHEMA = {
  dataDir: {
    type: 'string',
    doc: "Directory for generated state: the development signing secret, the catalog database and the gateway's event registration. The default is the package's own `data/`, whatever the current directory; a directory given in a file, the environment or `--data-dir` is taken relative to the current directory.",
  },
  'log.level': { type: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], doc: 'Least severity that is logged.' },
  'log.format': {
    type: 'enum',
    values: ['json', 'combined'],
    doc: "Access-log lines as JSON, or as nginx's `combined` line followed by `rt=`, `reqid=`, the cache result, the coding sent (`encoding=`) and `service=`. Other lines stay JSON.",
  },
  'log.destination': { type: 'string', doc: '`stdout`, or a file path that log lines are appended to.' },
  'auth.secretFile': {
    type: 'string',
    nullable: true,
    doc: 'HMAC (HS256) signing secret file; `null` means `<dataDir>/signing-secret`, generated on first start.',
  },
  'auth.jwks': {
    type: 'string',
    nullable: true,
    doc: 'JWKS file path or `https://` URL. When set, tokens are verified against it instead of the HMAC secret.',
  },
  'auth.issuer': { type: 'string', nullable: true, doc: 'Required `iss` claim, or `null` to accept any.' },
  'auth.audience': { type: 'string', nullable: true, doc: 'Required `aud` claim, or `null` to accept any.' },
  'auth.requiredScope': { type: 'string', doc: 'Scope that the `scope` claim must contain.' },
  'auth.verifiedTokenCache': {
    type: 'integer',
    min: 0,
    max: 10_000_000,
    doc: 'How many verified tokens are remembered (never past `exp`); 0 verifies every request from scratch.',
  },
  'http.maxTargetBytes': { type: 'integer', min: 64, max: 65536, doc: 'Longest request target (path and query) in bytes; longer ones get 414.' },
  'http.headersTimeoutMs': {
    type: 'integer',
    min: 100,
    max: 600_000,
    doc: "Time a client has to send a request's header section; slower clients (slowloris) get 408 and are cut. At most `http.requestTimeoutMs` (the header section is part of the request): a configuration with more is refused, at start and on reload.",
  },
  'http.requestTimeoutMs': { type: 'integer', min: 100, max: 3_600_000, doc: 'Time a client has to send a whole request, body included.' },
  'http.keepAliveTimeoutMs': { type: 'integer', min: 100, max: 600_000, doc: 'How long an idle keep-alive client connection is kept open.' },
  'http.maxConnections': {
    type: 'integer',
    min: 1,
    max: 1_000_000,
    doc: "Client connections per listener; more are closed as they arrive (mind the process's file descriptor limit).",
  },
  'http.credentialParameters': {
    type: 'string',
    doc: 'Comma-separated query parameter names that carry credentials (`access_token`, RFC 6750 §2.3): such requests get 400 and the values are redacted wherever the target is written.',
  },
  'http.trustedProxies': {
    type: 'addresses',
    doc: "Addresses and CIDR blocks of proxies in front of this server whose `X-Forwarded-For` is believed (and passed on, as are their `Forwarded` and `X-Forwarded-Host`/`-Proto`/`-Port`/`-Prefix`/`-Scheme`, which reach the origin from nobody else): the client address logged, rate-limited and forwarded is then the last untrusted hop. Empty: the connection's peer is the client. A list, or comma-separated in env.",
  },
  'http.shutdownTimeoutMs': {
    type: 'integer',
    min: 0,
    max: 600_000,
    doc: 'On SIGTERM/SIGINT, how long in-flight requests may take before connections are closed.',
  },
  'http.tls.cert': {
    type: 'string',
    nullable: true,
    doc: "PEM file with the gateway API listener's certificate chain (leaf first); with `http.tls.key` the listener speaks TLS 1.2+ and offers HTTP/2 and HTTP/1.1 by ALPN. Re-read on SIGHUP and when the file changes; a bad pair is refused and the old one kept. `null`: cleartext.",
  },
  'http.tls.key': { type: 'string', nullable: true, doc: 'PEM file with the private key of `http.tls.cert`; set both or neither.' },
  'http.tls.clientCertificates': {
    type: 'enum',
    values: ['off', 'required'],
    doc: '`required`: mutual TLS, a client without a certificate signed by `http.tls.clientCa` is refused at the handshake.',
  },
  'http.tls.clientCa': { type: 'string', nullable: true, doc: 'PEM file of the CAs that sign client certificates, for `http.tls.clientCertificates`.' },
  'http.tls.ticketKeyRotationMs': {
    type: 'integer',
    min: 1000,
    max: 7 * 86_400_000,
    doc: 'How often the key that encrypts TLS session tickets is replaced; the workers of a host share it (the primary hands it out), so a client resumes its session whichever worker takes the connection. A ticket issued under the previous key makes a full handshake instead.',
  },
  'http.h2c': {
    type: 'boolean',
    doc: 'Without TLS, the gateway API listener speaks HTTP/2 with prior knowledge (h2c, for a load balancer that speaks it) instead of HTTP/1.1.',
  },
  'http.http2.maxConcurrentStreams': {
    type: 'integer',
    min: 1,
    // A connection's streams are found by a linear search (shared/slot-table.ts): 2.3 µs a stream at 1,000.
    max: 1_000,
    doc: 'Streams (requests) one HTTP/2 client connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); at most 1,000.',
  },
  'http.http2.maxHeaderListBytes': {
    type: 'integer',
    min: 1024,
    max: 1024 * 1024,
    doc: 'Largest HTTP/2 request header list, uncompressed (SETTINGS_MAX_HEADER_LIST_SIZE); larger requests are refused.',
  },
  'http.http2.sendTimeoutMs': {
    type: 'integer',
    min: 100,
    max: 3_600_000,
    doc: "How long an HTTP/2 answer may hold bytes it cannot send (the client gives its stream no flow-control window) before its stream is reset, and a connection whose socket cannot write before it is closed: nginx's `send_timeout`.",
  },
  'http.http2.maxQueuedBytes': {
    type: 'integer',
    min: 64 * 1024,
    max: 1024 * 1024 * 1024,
    doc: 'Bytes of answers one HTTP/2 connection may hold unsent; while it holds more, its new streams are refused (REFUSED_STREAM, which a client may retry).',
  },
  'http.http2.maxResetsPerSecond': {
    type: 'integer',
    min: 1,
    max: 1_000_000,
    doc: 'Streams of one HTTP/2 connection that may end reset within a second; past it the connection gets GOAWAY (ENHANCE_YOUR_CALM) and is closed: the rapid-reset attack (CVE-2023-44487).',
  },
  'origin.host': { type: 'string', doc: 'Address the origin listens on.' },
  'origin.port': { ...PORT, doc: 'Origin API port (0 picks a free one).' },
  'origin.adminPort': { ...PORT, doc: 'Origin admin port: `/metrics`, `/healthz`, `/readyz`.' },
  'origin.db': { type: 'string', nullable: true, doc: 'Catalog database file; `null` means `<dataDir>/catalog.db`, seeded on first start.' },
  'origin.books': {
    type: 'integer',
    min: 1,
    max: 10_000_000,
    doc: 'Number of books generated when the database is seeded; once the file exists it is not reseeded, and a different value only draws a warning at start.',
  },
  'origin.maxAgeSeconds': { type: 'integer', min: 0, max: 31_536_000, doc: '`Cache-Control: public, max-age=N` on successful responses.' },
  'origin.cdnMaxAgeSeconds': {
    type: 'integer',
    min: 0,
    max: 31_536_000,
    doc: 'Adds `CDN-Cache-Control` (RFC 9213) with this max-age and the same other directives, which the gateway obeys instead of `Cache-Control`: a long lifetime for the gateway, which events purge, and `maxAgeSeconds` for browsers, which nothing purges; 0 sends none.',
  },
  'origin.staleWhileRevalidateSeconds': {
    type: 'integer',
    min: 0,
    max: 31_536_000,
    doc: "Adds `stale-while-revalidate=N` to the origin's Cache-Control; 0 sends none.",
  },
  'origin.staleIfErrorSeconds': { type: 'integer', min: 0, max: 31_536_000, doc: "Adds `stale-if-error=N` to the origin's Cache-Control; 0 sends none." },
  'origin.rateLimitPerMinute': {
    type: 'integer',
    min: 0,
    max: 1_000_000,
    doc: 'Requests per minute allowed per token subject (429 past it); 0 turns the limit off.',
  },
  'origin.events.retryForSeconds': {
    type: 'integer',
    min: 3600,
    max: 30 * 86_400,
    doc: 'How long an undelivered event is retried, with exponential backoff up to 5 min apart, before it is dropped.',
  },
  'origin.events.disableAfterSeconds': {
    type: 'integer',
    min: 1,
    max: 30 * 86_400,
    doc: 'A registration to which every delivery failed for this long is disabled: its queued events are dropped (counted and logged), it gets no new ones, and `GET /v1/webhooks/{id}` says `"state":"disabled"` until it is registered again.',
  },
  'origin.events.logSize': {
    type: 'integer',
    min: 1,
    max: 100_000_000,
    doc: 'Events the origin\'s event log keeps (the newest) for `GET /v1/events`, from which a gateway replays what it missed while away; one whose last event is older is answered 410 and revalidates instead (docs/caching.md, "After downtime").',
  },
  'origin.events.attemptTimeoutMs': { type: 'integer', min: 100, max: 600_000, doc: 'Time one webhook delivery attempt may take before it counts as failed.' },
  'gateway.host': { type: 'string', doc: 'Address the gateway listens on.' },
  'gateway.port': { ...PORT, doc: 'Gateway API port (0 picks a free one).' },
  'gateway.adminPort': { ...PORT, doc: 'Gateway admin port: `/metrics`, `/healthz`, `/readyz`.' },
  'gateway.origin': { type: 'url', doc: 'Base URL of the catalog origin.' },
  'gateway.accessLog': { type: 'boolean', doc: 'Write one access-log line per request.' },
  'gateway.metrics.gcDurations': {
    type: 'boolean',
    doc: '`nodejs_gc_duration_seconds`, prom-client\'s GC histogram; off by default. Node makes the performance entry it reads for every collection with objects that V8 puts in its old generation (3–6 KB each, some 75 collections a second under load): a gateway serving hits then makes a full collection in nearly every burst of traffic, where without the histogram it seldom does (docs/performance.md, "The GC histogram off by default"). Event-loop lag (`nodejs_eventloop_lag_*`) and CPU still show what pauses cost; `true` adds the histogram.',
  },
  'gateway.workers': {
    type: 'workers',
    max: 256,
    doc: 'Processes serving the API port (node:cluster): a number, or `auto` for one per core. Past 1 a primary process replaces workers that die, drains them all on SIGTERM, and answers the admin port for all of them.',
  },
  'gateway.workerAccept': {
    type: 'enum',
    values: ['workers', 'primary', 'reuseport'],
    doc: "With workers, who accepts the API port's connections: `primary`, which accepts every connection and hands it to the next worker in turn over its IPC channel (node:cluster's round robin); `workers`, each from the one listening socket the primary opened (the kernel's shared accept queue); or `reuseport`, each from a listening socket of its own on the port (Linux `SO_REUSEPORT`), the kernel choosing one per connection. Round robin spreads connections evenly, a few long keep-alive clients too; the shared queue spares each connection the hand-off, 15–20 % of a resumed TLS connection's CPU, for a host that takes many short TLS connections; `reuseport` also wakes one worker per connection instead of all of them, but a worker that drains (a rolling restart) resets the connections still queued on its socket unless the host sets `net.ipv4.tcp_migrate_req` to 1 (docs/fleet.md).",
  },
  'gateway.cache.maxBytes': {
    type: 'integer',
    min: MIB,
    max: 64 * 1024 * MIB,
    doc: 'Cache bound in bytes: what the entries cost the process in memory, body, headers, key and the reserve the heap keeps around them included. A process with a full cache needs about 175 MiB + this, with the disk tier off (docs/benchmarks.md, "What RSS to plan for").',
  },
  'gateway.cache.targetedFields': {
    type: 'string',
    nullable: true,
    doc: 'Comma-separated targeted cache-control fields (RFC 9213) that this cache obeys instead of `Cache-Control` and `Expires`, the first present with a valid value deciding: a field of its own (`Catalog-Gateway-Cache-Control`) before `CDN-Cache-Control`. Forwarded to clients as received; `null` obeys only `Cache-Control`.',
  },
  'gateway.cache.maxEntryBytes': {
    type: 'integer',
    min: 1024,
    max: 1024 * MIB,
    doc: 'Largest single entry that is stored; larger responses are served but not cached.',
  },
  'gateway.cache.admission': {
    type: 'boolean',
    doc: 'W-TinyLFU admission in front of the LRU: a new entry pushes older ones out only if it is asked for more often, so scans and one-off searches do not flush the popular entries; while a shadow LRU over a sample of the keys would hit more (recency-biased traffic), its window grows to the top of its range, where every entry is admitted and a key asked twice is protected (a segmented LRU; docs/performance.md, "Hit ratio"). `false` is plain LRU.',
  },
  'gateway.cache.disk.enabled': {
    type: 'boolean',
    doc: 'The disk tier: entries kept on disk under the memory tier, shared by the workers of a host and kept across restarts (docs/caching.md, "The disk tier"). A memory miss looks there before the fleet or the origin. `false` keeps the cache in memory only.',
  },
  'gateway.cache.disk.path': {
    type: 'string',
    nullable: true,
    doc: 'Directory of the disk tier; `null` means `<dataDir>/cache`. One gateway (with its workers) per directory: a second one pointed at it is refused at start.',
  },
  'gateway.cache.disk.maxBytes': {
    type: 'integer',
    min: MIB,
    max: 16 * 1024 * 1024 * MIB,
    doc: "Bound on what the disk tier's entries take on disk (values, keys, tags and the rows' overhead); the least recently used go first.",
  },
  'gateway.upstream.connections': { type: 'integer', min: 1, max: 4096, doc: 'Most keep-alive connections to the origin.' },
  'gateway.upstream.connectTimeoutMs': { type: 'integer', min: 1, max: 600_000, doc: 'Time allowed to connect to the origin.' },
  'gateway.upstream.headersTimeoutMs': { type: 'integer', min: 1, max: 600_000, doc: 'Time allowed for the origin to send response headers (504 past it).' },
  'gateway.upstream.bodyTimeoutMs': { type: 'integer', min: 1, max: 600_000, doc: 'Longest pause allowed while the origin sends a body (504 past it).' },
  'gateway.upstream.maxResponseBytes': {
    type: 'integer',
    min: 1024,
    max: 1024 * MIB,
    doc: 'Largest origin response body a fill accepts (502 past it); relayed bodies are streamed and not bounded.',
  },
  'gateway.upstream.keepAliveTimeoutMs': {
    type: 'integer',
    min: 1,
    max: 600_000,
    doc: 'How long an idle origin connection is kept; an origin `Keep-Alive: timeout` hint, less 2 s, takes precedence.',
  },
  'gateway.upstream.probe': {
    type: 'url-or-path',
    nullable: true,
    doc: "The origin's health check: an absolute URL, or a path on `gateway.origin`; up means a 2xx answer. `null` asks `GET /` of `gateway.origin` itself, and any answer below 500 (401 and 404 included) means up. It drives `/readyz` and `catalog_gateway_origin_up`; `npm start` probes its origin's admin `/readyz`.",
  },
  'gateway.upstream.probeIntervalMs': {
    type: 'integer',
    min: 100,
    max: 600_000,
    doc: 'How often the health check is asked; a request that cannot reach the origin asks it at once.',
  },
  'gateway.upstream.acceptEncoding': {
    type: 'string',
    doc: 'The `Accept-Encoding` a fill sends the origin (whatever the client sent), so the origin may send a compressed body; it is stored as it came and decoded for clients that cannot accept it. `identity` asks for none.',
  },
  'gateway.compression.encodings': {
    type: 'list',
    values: ['gzip', 'br', 'zstd'],
    doc: 'Codings catalog routes send to clients that accept them, in the gateway\'s order of preference among equally weighted ones; the first is made once at fill and the others when asked for, kept from the second request that asks on (docs/caching.md, "Compression"). Empty: no compression.',
  },
  'gateway.compression.minBytes': { type: 'integer', min: 0, max: 1024 * MIB, doc: 'Smallest body that is compressed.' },
  'gateway.compression.types': {
    type: 'list',
    doc: 'Media types that are compressed (`type/subtype`, or `type/*`); answers of other types are stored and sent as they came.',
  },
  'gateway.compression.levels.gzip': { type: 'integer', min: 1, max: 9, doc: 'gzip (zlib) level.' },
  'gateway.compression.levels.br': { type: 'integer', min: 0, max: 11, doc: 'Brotli quality.' },
  'gateway.compression.levels.zstd': { type: 'integer', min: 1, max: 22, doc: 'Zstandard level.' },
  'gateway.rateLimit.perTokenPerSecond': {
    type: 'integer',
    min: 0,
    max: 10_000_000,
    doc: 'Requests per second each token subject may make (token bucket), checked before the cache; 0 turns it off.',
  },
  'gateway.rateLimit.perTokenBurst': {
    type: 'integer',
    min: 1,
    max: 10_000_000,
    doc: 'Bucket size of the per-token limit: requests allowed at once after a quiet spell.',
  },
  'gateway.rateLimit.perIpPerSecond': {
    type: 'integer',
    min: 0,
    max: 10_000_000,
    doc: 'Requests per second each client address may make, checked before authentication; 0 turns it off.',
  },
  'gateway.rateLimit.perIpBurst': { type: 'integer', min: 1, max: 10_000_000, doc: 'Bucket size of the per-address limit.' },
  'gateway.redis.url': {
    type: 'redis-url',
    doc: "The shared tier: `redis://host:port/db` (`rediss://` for TLS), `redis+cluster://h1:p1,h2:p2` or `redis+sentinel://h1:p1,h2:p2/master`. Every process with the same Redis shares entries, one origin call per query and purges; `null` keeps each process's cache to itself.",
  },
  'gateway.redis.keyPrefix': { type: 'string', doc: 'Prefix of every Redis key the gateway writes (entries, locks, the purge stream, the fill channel).' },
  'gateway.redis.commandTimeoutMs': {
    type: 'integer',
    min: 1,
    max: 60_000,
    doc: 'Longest a Redis operation may take; three failures in a row pause the shared tier for `cooldownMs` and the process serves from its own cache.',
  },
  'gateway.redis.cooldownMs': {
    type: 'integer',
    min: 10,
    max: 600_000,
    doc: 'How long the shared tier is left alone after repeated failures before it is tried again.',
  },
  'gateway.redis.lockMs': {
    type: 'integer',
    min: 100,
    max: 600_000,
    doc: 'Lifetime of a fleet-wide fill lock; its holder renews it every third of it while it fills, so only a holder that died or was cut off from Redis lets it lapse, and the processes waiting on it take the fill over then: the longest they wait on such a holder.',
  },
  'gateway.redis.fillWaitMs': {
    type: 'integer',
    min: 10,
    max: 600_000,
    doc: "Last resort: the longest a process waits for another process's fill of the same query (renewed however often) before asking the origin itself.",
  },
  'gateway.redis.partitionBoundMs': {
    type: 'integer',
    min: 100,
    max: 600_000,
    doc: 'The stale-read bound through a partition: once the purge stream has been unread this long (Redis unreachable), entries older than this are revalidated with the origin instead of served as fresh, until the stream is read again.',
  },
  'gateway.redis.purgeStreamLength': {
    type: 'integer',
    min: 100,
    max: 10_000_000,
    doc: 'Purges kept in the Redis stream (and remembered by each process) for processes that reconnect; one that missed more drops its local cache.',
  },
  'gateway.purge.tagHeader': {
    type: 'string',
    doc: "Response field the origin names its tags in (Fastly's `Surrogate-Key`); entries are indexed by them for purges.",
  },
  'gateway.purge.exposeTagHeader': { type: 'boolean', doc: 'Pass the tag field on to clients; by default it is removed.' },
  'gateway.events.register': {
    type: 'boolean',
    doc: 'At start, register the event receiver with the origin (`POST /v1/webhooks`) and keep the registration in `<dataDir>/gateway-events.json`.',
  },
  'gateway.events.receiverUrl': {
    type: 'string',
    nullable: true,
    doc: "URL the origin posts events to (absolute `https://` or `http://`, without credentials, as the origin registers receivers; anything else is refused at start); `null` means this gateway's admin listener `/events`.",
  },
  'gateway.events.token': {
    type: 'string',
    nullable: true,
    doc: 'A `catalog:admin` token for registering; `null` mints one with the HMAC secret (not possible with `auth.jwks`). Prefer the environment variable.',
  },
  'gateway.events.secret': {
    type: 'string',
    nullable: true,
    doc: 'The `whsec_…` secret of a registration made by hand, when `register` is false; one that is not `whsec_` and base64 is refused at start (the message does not show it).',
  },
  'gateway.events.unregisterOnStop': {
    type: 'boolean',
    doc: "At stop, remove this gateway's own registration (not one shared under `receiverUrl`): for replicas that go for good (a scale-down), not for a gateway that restarts and wants the events queued meanwhile.",
  },
  'gateway.events.pollMs': {
    type: 'integer',
    min: 0,
    max: 3_600_000,
    doc: 'How often the gateway reads the origin\'s event log (`GET /v1/events`) for events after the last it applied, a backstop for webhook deliveries lost or late; 0 turns the poll off (docs/caching.md, "After downtime").',
  },
  'gateway.events.softPurge': { type: 'boolean', doc: 'Events mark the entries they concern stale (soft purge) instead of removing them.' },
  'gateway.routes': {
    type: 'routes',
    doc: 'Ordered route table; the first `prefix` that matches the path wins (docs/caching.md, "Routes"). `mode`: `catalog` (the contract\'s parameters, canonical keys and errors), `http` (a generic RFC 9111 shared cache) or `pass` (forwarded, never stored); `auth`: `required` (a token with `scope`, by default `auth.requiredScope`) or `off`; optional `staleWhileRevalidateSeconds` and `staleIfErrorSeconds` (windows used when the origin names none), `staleIfDisconnectedSeconds` (the longest staleness served while the origin is unreachable, closes or times out, RFC 9111 §4.2.4; 0, the default, only what stale-if-error allows) and `requestCacheControl` (`honour`, the default, or `ignore` the client\'s Cache-Control). JSON in env.',
  },
} as const satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof SCHEMA;

type ValueOf<S> = S extends { type: 'integer' }
  ? number
  : S extends { type: 'boolean' }
    ? boolean
    : S extends { type: 'routes' }
      ? readonly RouteConfig[]
      : S extends { type: 'list'; values: readonly (infer V)[] }
        ? readonly V[]
        : S extends { type: 'list' }
          ? readonly string[]
          : S extends { type: 'addresses' }
            ? readonly string[]
            : S extends { type: 'workers' }
              ? number | 'auto'
              : S extends { type: 'redis-url' }
                ? string | null
                : S extends { type: 'enum'; values: readonly (infer V)[] }
                  ? V
                  : S extends { nullable: true }
                    ? string | null
                    : string;

export type Config = { readonly [K in ConfigKey]: ValueOf<(typeof SCHEMA)[K]> };

/** `gateway.cache.maxBytes` → `CATALOG_GATEWAY_CACHE_MAX_BYTES`. */
export function envName(key: ConfigKey): string {
  return `CATALOG_${key
    .replace(/\./g, '_')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()}`;
}
