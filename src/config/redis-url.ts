/**
 * `gateway.redis.url`: one string for the three ways a user runs Redis, so that growing from one
 * Redis to a Cluster or to Sentinel is a change of URL, not of configuration shape.
 *
 * - `redis://[user:password@]host[:port][/db]` (`rediss://` for TLS): one server.
 * - `redis+cluster://[user:password@]host:port,host:port,…`: seed nodes of a Redis Cluster.
 * - `redis+sentinel://[user:password@]host:port,host:port,…/master-name[/db]`: Sentinels and
 *   the name of the master they watch.
 */

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

interface Credentials {
  readonly username: string | undefined;
  readonly password: string | undefined;
}

export type RedisTarget =
  | ({ readonly kind: 'standalone'; readonly node: RedisNode; readonly db: number; readonly tls: boolean } & Credentials)
  | ({ readonly kind: 'cluster'; readonly nodes: readonly RedisNode[]; readonly tls: boolean } & Credentials)
  | ({ readonly kind: 'sentinel'; readonly sentinels: readonly RedisNode[]; readonly master: string; readonly db: number } & Credentials);

const SCHEMES: Readonly<Record<string, { kind: RedisTarget['kind']; tls: boolean }>> = {
  'redis:': { kind: 'standalone', tls: false },
  'rediss:': { kind: 'standalone', tls: true },
  'redis+cluster:': { kind: 'cluster', tls: false },
  'rediss+cluster:': { kind: 'cluster', tls: true },
  'redis+sentinel:': { kind: 'sentinel', tls: false },
};

export class RedisUrlError extends Error {
  override name = 'RedisUrlError';
}

function node(text: string, defaultPort: number): RedisNode {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:/\s]+)(?::(\d+))?$/.exec(text);
  const match = bracketed ?? plain;
  if (match === null || match[1] === undefined) throw new RedisUrlError(`"${text}" is not host[:port]`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RedisUrlError(`port ${match[2] ?? ''} is out of range`);
  return { host: match[1], port };
}

function database(text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  if (!/^\d{1,2}$/.test(text)) throw new RedisUrlError(`database "${text}" is not a number`);
  return Number(text);
}

/** A percent-encoded part of the user information; what it holds is not repeated in the error. */
function decoded(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new RedisUrlError(`the ${what} has a % not followed by two hex digits: write % itself as %25`);
  }
}

/** Parses a Redis URL; throws RedisUrlError saying what is wrong with it. */
export function parseRedisUrl(url: string): RedisTarget {
  const schemeEnd = url.indexOf('//');
  const scheme = schemeEnd > 0 ? url.slice(0, schemeEnd) : '';
  const spec = SCHEMES[scheme];
  if (spec === undefined)
    throw new RedisUrlError(
      `the scheme must be one of ${Object.keys(SCHEMES)
        .map((s) => `${s}//`)
        .join(', ')}`,
    );
  let rest = url.slice(schemeEnd + 2);
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(':');
    username = decoded(colon < 0 ? userinfo : userinfo.slice(0, colon), 'user name') || undefined;
    password = colon < 0 ? undefined : decoded(userinfo.slice(colon + 1), 'password');
  }
  const slash = rest.indexOf('/');
  const hosts = (slash < 0 ? rest : rest.slice(0, slash)).split(',').filter((h) => h !== '');
  const path = slash < 0 ? [] : rest.slice(slash + 1).split('/');
  if (hosts.length === 0) throw new RedisUrlError('no host is named');
  switch (spec.kind) {
    case 'standalone': {
      const [only] = hosts;
      if (only === undefined || hosts.length > 1)
        throw new RedisUrlError('a redis:// URL names one host; use redis+cluster:// or redis+sentinel:// for several');
      return { kind: 'standalone', node: node(only, 6379), db: database(path[0]), tls: spec.tls, username, password };
    }
    case 'cluster':
      if (path.some((p) => p !== '')) throw new RedisUrlError('a Redis Cluster has no databases, so the URL takes no path');
      return { kind: 'cluster', nodes: hosts.map((h) => node(h, 6379)), tls: spec.tls, username, password };
    case 'sentinel': {
      const master = path[0];
      if (master === undefined || master === '') throw new RedisUrlError('a redis+sentinel:// URL names the master after the hosts: …/mymaster');
      return { kind: 'sentinel', sentinels: hosts.map((h) => node(h, 26379)), master: decodeURIComponent(master), db: database(path[1]), username, password };
    }
  }
}

/**
 * Text with the password of every URL in it written `***`: a Redis URL in logs and `/readyz`, any
 * value in a configuration error. A password runs to the last `@` of its URL, as parseRedisUrl
 * reads it, so one with an `@` or a `/` of its own is hidden whole.
 */
export function withoutPasswords(text: string): string {
  return text.replace(/\/\/([^@/:\s"]*):[^\s"]*@/g, '//$1:***@');
}
