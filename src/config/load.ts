/**
 * Loads the configuration once at start-up: the default file, then an optional file, then
 * environment variables, then flags. Each value is validated against the schema; the first bad
 * one stops start-up with a ConfigError naming the key, where the value came from and what was
 * expected. The result is frozen. This is the only module that reads configuration from `process.env`
 * (GATEWAY_NODE_HTTP, a switch for tests, is read by shared/node-http-internals.ts).
 *
 * Every `CATALOG_*` variable belongs to this loader (one per key, and CATALOG_CONFIG), so one
 * it does not know is a typo and is refused like an unknown file key: a misspelt variable that
 * were ignored would leave the default in force with nothing said.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { Webhook } from 'standardwebhooks';
import { invalidProxyEntry } from '../shared/client-address.ts';
import { webhookUrl } from '../shared/webhook-url.ts';
import { didYouMean } from './did-you-mean.ts';
import { parseRedisUrl, RedisUrlError, withoutPasswords } from './redis-url.ts';
import { SCHEMA, envName, type Config, type ConfigKey, type KeySpec, type RouteConfig } from './schema.ts';
import { formatQuantity, parseQuantity, unitExamples, unitOf, type Unit } from './units.ts';

export const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('../../config/default.jsonc', import.meta.url));
/** The package's own directory, where the default `dataDir` lives whatever the current directory. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_SOURCE = 'config/default.jsonc';
const CONFIG_FILE_ENV = 'CATALOG_CONFIG';
const ENV_PREFIX = 'CATALOG_';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface FlagValue {
  readonly key: ConfigKey;
  /** The flag as typed, for the error message. */
  readonly flag: string;
  readonly value: string;
}

export interface LoadOptions {
  /** Defaults to `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** A file layered over the defaults; `CATALOG_CONFIG` names one when this is absent. */
  readonly file?: string;
  readonly flags?: readonly FlagValue[];
  /** Individual values set by a program (tests, `start`), applied last. */
  readonly overrides?: Partial<Record<ConfigKey, unknown>>;
}

const KEYS = Object.keys(SCHEMA) as ConfigKey[];

function isKey(key: string): key is ConfigKey {
  return Object.hasOwn(SCHEMA, key);
}

/** Keys and the objects that hold them (`gateway.cache`), the names a file may use. */
const FILE_NAMES = new Set(KEYS.flatMap((key) => key.split('.').map((_, i, parts) => parts.slice(0, i + 1).join('.'))));
const ENV_NAMES = new Set([...KEYS.map(envName), CONFIG_FILE_ENV]);

function refuseUnknownEnv(env: NodeJS.ProcessEnv): void {
  const unknown = Object.keys(env).find((name) => name.startsWith(ENV_PREFIX) && !ENV_NAMES.has(name));
  if (unknown !== undefined) {
    throw new ConfigError(
      `unknown environment variable ${unknown}${didYouMean(unknown, ENV_NAMES)}: every ${ENV_PREFIX}* variable names a config key (docs/configuration.md)`,
    );
  }
}

function readJsonc(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`config file ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (first !== undefined) {
    // An editor goes to a line and column, not an offset.
    const lines = text.slice(0, first.offset).split('\n');
    const where = `line ${String(lines.length)} column ${String((lines.at(-1)?.length ?? 0) + 1)}`;
    throw new ConfigError(`config file ${path} is not valid JSONC: ${printParseErrorCode(first.error)} at ${where} (offset ${String(first.offset)})`);
  }
  return value;
}

/**
 * What a server makes at start-up from a file a key names (a key set, a secret): a file that cannot
 * be read or used is refused naming the key, like a bad value, never with a stack trace. The
 * reason given is the errno code or `unusable`, not the parser's message, which can quote the
 * file, and the file may be a secret.
 */
export function fromConfiguredFile<T>(key: ConfigKey, path: string, unusable: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`config key ${key}: ${path} ${typeof code === 'string' && code.startsWith('E') ? `cannot be read (${code})` : unusable}`);
  }
}

/** Flattens `{ gateway: { port: 1 } }` into `gateway.port`, rejecting keys the schema lacks. */
function flatten(value: unknown, source: string, prefix: string, into: Map<ConfigKey, [unknown, string]>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${prefix === '' ? 'the top level' : prefix} (from ${source}) must be an object`);
  }
  for (const [name, child] of Object.entries(value)) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    if (isKey(key)) into.set(key, [child, source]);
    else if (KEYS.some((k) => k.startsWith(`${key}.`))) flatten(child, source, key, into);
    else throw new ConfigError(`unknown config key ${key} (from ${source})${didYouMean(key, FILE_NAMES)}`);
  }
}

function expected(spec: KeySpec, unit: Unit | undefined): string {
  switch (spec.type) {
    case 'integer':
      return unit === undefined
        ? `an integer from ${spec.min} to ${spec.max}`
        : `from ${spec.min} to ${spec.max} ${unit}, as an integer or with a unit (${unitExamples(unit).replaceAll('`', '')})`;
    case 'boolean':
      return 'true or false';
    case 'enum':
      return `one of ${spec.values.join(', ')}`;
    case 'url':
      return 'an http:// or https:// URL';
    case 'url-or-path':
      return `an http:// or https:// URL, or a path starting with /${spec.nullable === true ? ', or null' : ''}`;
    case 'routes':
      return 'a non-empty list of routes (docs/caching.md, "Routes")';
    case 'addresses':
      return 'a list of IP addresses and CIDR blocks (comma-separated in env and flags)';
    case 'list':
      return spec.values === undefined
        ? 'a list of non-empty strings (comma-separated in env and flags)'
        : `a list of ${spec.values.join(', ')} (comma-separated in env and flags)`;
    case 'workers':
      return `an integer from 1 to ${spec.max}, or auto (one per core)`;
    case 'redis-url':
      return 'null, or a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL';
    case 'string':
      return spec.nullable === true ? 'a non-empty string or null' : 'a non-empty string';
  }
}

const ROUTE_DEFAULTS = {
  auth: 'required',
  scope: null,
  staleWhileRevalidateSeconds: 0,
  staleIfErrorSeconds: 0,
  staleIfDisconnectedSeconds: 0,
  requestCacheControl: 'honour',
} as const;
const ROUTE_FIELDS: Readonly<Record<keyof RouteConfig, (v: unknown) => boolean>> = {
  prefix: (v) => typeof v === 'string' && v.startsWith('/') && !/[?#\s]/.test(v),
  mode: (v) => v === 'catalog' || v === 'http' || v === 'pass',
  auth: (v) => v === 'required' || v === 'off',
  scope: (v) => v === null || (typeof v === 'string' && /^[\x21-\x7e]+$/.test(v)),
  staleWhileRevalidateSeconds: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  staleIfErrorSeconds: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  staleIfDisconnectedSeconds: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  requestCacheControl: (v) => v === 'honour' || v === 'ignore',
};

type Coerced = { ok: true; value: unknown } | { ok: false; why?: string; notJson?: string };

/** A route table: each route an object of known fields, defaults filled in, prefixes unique. */
function coerceRoutes(raw: unknown): Coerced {
  if (!Array.isArray(raw) || raw.length === 0) return { ok: false };
  const routes: RouteConfig[] = [];
  for (const [i, entry] of (raw as unknown[]).entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return { ok: false, why: `route ${i} is not an object` };
    // prefix and mode first, so a route reads the same in logs and docs whatever order it was written in.
    const route: Record<string, unknown> = { prefix: undefined, mode: undefined, ...ROUTE_DEFAULTS, ...entry };
    if (route.prefix === undefined || route.mode === undefined) return { ok: false, why: `route ${i} needs prefix and mode` };
    for (const name of Object.keys(route)) {
      const check = Object.hasOwn(ROUTE_FIELDS, name) ? ROUTE_FIELDS[name as keyof RouteConfig] : undefined;
      if (check === undefined) return { ok: false, why: `route ${i} has unknown field ${name}` };
      if (!check(route[name])) return { ok: false, why: `route ${i} field ${name} = ${JSON.stringify(route[name])} is not valid` };
    }
    if (routes.some((r) => r.prefix === route.prefix)) return { ok: false, why: `route ${i} repeats prefix ${JSON.stringify(route.prefix)}` };
    routes.push(Object.freeze(route) as unknown as RouteConfig);
  }
  return { ok: true, value: Object.freeze(routes) };
}

function coerceAddresses(raw: unknown): Coerced {
  if (!Array.isArray(raw) || !raw.every((entry) => typeof entry === 'string')) return { ok: false };
  const why = raw.map((entry) => invalidProxyEntry(entry)).find((reason) => reason !== undefined);
  return why === undefined ? { ok: true, value: Object.freeze([...raw]) } : { ok: false, why };
}

/** JSON in an env variable or flag; a syntax error is its own answer, with where it fails. */
function coerceJson(text: string, then: (value: unknown) => Coerced): Coerced {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, notJson: err instanceof SyntaxError ? err.message : String(err) };
  }
  return then(value);
}

/** JSON `null` in a file, the word `null` in env and flags. */
function isNull(raw: unknown, text: string | undefined, fromText: boolean): boolean {
  return raw === null || (fromText && text === 'null');
}

/** Values from env and flags are strings; file values are JSON. Both go through one check. */
function coerce(spec: KeySpec, raw: unknown, fromText: boolean, unit: Unit | undefined): Coerced {
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  switch (spec.type) {
    case 'integer': {
      let n = fromText && text !== undefined && /^-?[0-9]+$/.test(text) ? Number(text) : raw;
      if (unit !== undefined && text !== undefined) n = parseQuantity(text, unit);
      return typeof n === 'number' && Number.isSafeInteger(n) && n >= spec.min && n <= spec.max ? { ok: true, value: n } : { ok: false };
    }
    case 'boolean': {
      const b = fromText && (text === 'true' || text === 'false') ? text === 'true' : raw;
      return typeof b === 'boolean' ? { ok: true, value: b } : { ok: false };
    }
    case 'enum':
      return text !== undefined && spec.values.includes(text) ? { ok: true, value: text } : { ok: false };
    case 'url': {
      if (text === undefined || !URL.canParse(text)) return { ok: false };
      const url = new URL(text);
      return url.protocol === 'http:' || url.protocol === 'https:' ? { ok: true, value: url.origin } : { ok: false };
    }
    case 'url-or-path': {
      if (spec.nullable === true && isNull(raw, text, fromText)) return { ok: true, value: null };
      if (text?.startsWith('/') === true && !/\s/.test(text)) return { ok: true, value: text };
      return text !== undefined && URL.canParse(text) && /^https?:$/.test(new URL(text).protocol) ? { ok: true, value: text } : { ok: false };
    }
    case 'routes':
      return fromText && text !== undefined ? coerceJson(text, coerceRoutes) : coerceRoutes(raw);
    case 'addresses':
      return coerceAddresses(
        text !== undefined
          ? text
              .split(',')
              .map((entry) => entry.trim())
              .filter((entry) => entry !== '')
          : raw,
      );
    case 'list': {
      const list =
        text !== undefined
          ? text
              .split(',')
              .map((entry) => entry.trim())
              .filter((entry) => entry !== '')
          : raw;
      if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string' && entry !== '' && (spec.values?.includes(entry) ?? true)))
        return { ok: false };
      return { ok: true, value: Object.freeze([...new Set(list)]) };
    }
    case 'workers': {
      if (text === 'auto') return { ok: true, value: 'auto' };
      const n = fromText && text !== undefined && /^[0-9]+$/.test(text) ? Number(text) : raw;
      return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= spec.max ? { ok: true, value: n } : { ok: false };
    }
    case 'redis-url':
      if (isNull(raw, text, fromText)) return { ok: true, value: null };
      if (text === undefined) return { ok: false };
      try {
        parseRedisUrl(text);
        return { ok: true, value: text };
      } catch (err) {
        if (err instanceof RedisUrlError) return { ok: false, why: err.message };
        throw err;
      }
    case 'string':
      if (spec.nullable === true && isNull(raw, text, fromText)) return { ok: true, value: null };
      return text !== undefined && text !== '' ? { ok: true, value: text } : { ok: false };
  }
}

/** Pairs of listeners that share a host, so cannot share a port. */
const LISTENER_PAIRS = [
  ['gateway.port', 'gateway.adminPort'],
  ['origin.port', 'origin.adminPort'],
] as const satisfies readonly (readonly [ConfigKey, ConfigKey])[];

function refusePortClash(config: Record<string, unknown>, sourceOf: (key: ConfigKey) => string): void {
  for (const [api, admin] of LISTENER_PAIRS) {
    const port = config[api];
    if (port === 0 || port !== config[admin]) continue;
    throw new ConfigError(
      `config keys ${api} (from ${sourceOf(api)}) and ${admin} (from ${sourceOf(admin)}) are both ${String(port)}: the API and admin listeners need a port each`,
    );
  }
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  refuseUnknownEnv(env);
  const layers = new Map<ConfigKey, [unknown, string]>();
  flatten(readJsonc(DEFAULT_CONFIG_FILE), DEFAULT_SOURCE, '', layers);
  const missing = KEYS.find((k) => !layers.has(k));
  if (missing !== undefined) throw new ConfigError(`config/default.jsonc lacks key ${missing}`);
  const file = options.file ?? env[CONFIG_FILE_ENV];
  if (file !== undefined && file !== '') flatten(readJsonc(file), `file ${file}`, '', layers);
  const textual = new Set<string>();
  for (const key of KEYS) {
    const name = envName(key);
    const value = env[name];
    if (value !== undefined) {
      layers.set(key, [value, `env ${name}`]);
      textual.add(key);
    }
  }
  for (const { key, flag, value } of options.flags ?? []) {
    layers.set(key, [value, `flag ${flag}`]);
    textual.add(key);
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    if (!isKey(key)) throw new ConfigError(`unknown config key ${key} (from overrides)`);
    layers.set(key, [value, 'overrides']);
    textual.delete(key);
  }
  const config: Record<string, unknown> = {};
  for (const key of KEYS) {
    const [raw, source] = layers.get(key) ?? [undefined, 'nowhere'];
    const spec: KeySpec = SCHEMA[key];
    const unit = unitOf(key);
    const result = coerce(spec, raw, textual.has(key), unit);
    if (!result.ok) {
      // The message goes to stderr and, on a refused reload, to the log: a URL's password stays out of it.
      const shown = withoutPasswords(JSON.stringify(raw));
      if (result.notJson !== undefined) throw new ConfigError(`config key ${key} = ${shown} (from ${source}) is not valid JSON: ${result.notJson}`);
      const why = result.why === undefined ? '' : ` (${result.why})`;
      throw new ConfigError(`config key ${key} = ${shown} (from ${source}): expected ${expected(spec, unit)}${why}`);
    }
    config[key] = result.value;
  }
  // The default data directory is the package's, so every command finds the same secret and
  // catalog wherever it is run from; a directory given by the user is read as typed.
  config.dataDir = resolve(layers.get('dataDir')?.[1] === DEFAULT_SOURCE ? PROJECT_ROOT : process.cwd(), config.dataDir as string);
  const sourceOf = (key: ConfigKey): string => layers.get(key)?.[1] ?? 'nowhere';
  refusePortClash(config, sourceOf);
  refuseTimeoutOrder(config, sourceOf);
  checkEventSecret(config as Config, sourceOf);
  checkReceiverUrl(config as Config, sourceOf);
  checkTls(config as Config);
  return Object.freeze(config) as Config;
}

/**
 * A header section is part of its request, so it cannot have longer to arrive than the whole
 * request: Node refuses to create such a server, with a stack trace instead of a message.
 */
function refuseTimeoutOrder(config: Record<string, unknown>, sourceOf: (key: ConfigKey) => string): void {
  const headers = config['http.headersTimeoutMs'] as number;
  const whole = config['http.requestTimeoutMs'] as number;
  if (headers <= whole) return;
  throw new ConfigError(
    `config key http.headersTimeoutMs = ${formatQuantity(headers, 'ms')} (from ${sourceOf('http.headersTimeoutMs')}) is longer than http.requestTimeoutMs = ${formatQuantity(whole, 'ms')} (from ${sourceOf('http.requestTimeoutMs')}): the header section is part of the request, so it may take at most as long`,
  );
}

/**
 * A hand-made registration's secret the Standard Webhooks library cannot take (not `whsec_` and
 * base64) would have every event refused, as the library's error reached the receiver; the
 * value is a secret, so the message does not show it.
 */
function checkEventSecret(config: Config, sourceOf: (key: ConfigKey) => string): void {
  const secret = config['gateway.events.secret'];
  if (secret === null) return;
  try {
    new Webhook(secret);
  } catch {
    throw new ConfigError(
      `config key gateway.events.secret (from ${sourceOf('gateway.events.secret')}, not shown): expected whsec_ followed by the base64 of the key, as POST /v1/webhooks answers it`,
    );
  }
}

/**
 * A receiver URL the origin would refuse would only show as a registration retried every few
 * seconds with a warning; at start it is one line naming the key.
 */
function checkReceiverUrl(config: Config, sourceOf: (key: ConfigKey) => string): void {
  const url = config['gateway.events.receiverUrl'];
  if (url === null || webhookUrl(url) !== undefined) return;
  throw new ConfigError(
    `config key gateway.events.receiverUrl = ${JSON.stringify(withoutPasswords(url))} (from ${sourceOf('gateway.events.receiverUrl')}): expected an absolute https:// (or http://) URL without credentials, as the origin registers receivers`,
  );
}

/** The TLS keys that only make sense together. */
function checkTls(config: Config): void {
  if ((config['http.tls.cert'] === null) !== (config['http.tls.key'] === null))
    throw new ConfigError('config keys http.tls.cert and http.tls.key are set together or not at all');
  if (config['http.tls.clientCertificates'] === 'required' && (config['http.tls.cert'] === null || config['http.tls.clientCa'] === null)) {
    throw new ConfigError('config key http.tls.clientCertificates = "required" needs http.tls.cert, http.tls.key and http.tls.clientCa');
  }
}
