/**
 * One access-log line per request, the same fields from the origin and the gateway: JSON by
 * default, or nginx's `combined` line for people who grep (`log.format`). The
 * path is logged with its query string (the specification wants searches visible in access
 * logs); a token never is: the record has no field that could hold one, only the verified
 * token's subject, and the path comes redacted (a `RedactedTarget`, credentials.ts). Lines
 * are formatted here and written to the logger's own destination, in order with its other lines;
 * a record is handed over as it is, and made into its line with the others of the same turn of the
 * event loop (log-sink.ts), so it must not change once logged.
 */
import { randomBytes } from 'node:crypto';
import type { Reply, RequestHead } from './message-seam.ts';
import type { ClientAddress } from './client-address.ts';
import { redactJwts, type RedactedTarget } from './credentials.ts';
import { BoundedMemo } from './bounded-memo.ts';
import { lineWriter, TimeStamp, type Logger } from './logger.ts';

export interface AccessRecord {
  /** `X-Request-Id` as propagated or generated. */
  readonly reqId: string;
  readonly method: string;
  /** The request target as received, path and query, with its credentials redacted by the caller. */
  readonly path: RedactedTarget;
  readonly status: number;
  /** Body bytes sent (0 for HEAD and 304). */
  readonly bytes: number;
  readonly durationMs: number;
  /** The verified token's subject, when there was one. */
  readonly sub: string | undefined;
  /** The client's address: the connection's peer, or behind trusted proxies the client they name (client-address.ts). */
  readonly remote: string | undefined;
  /** `User-Agent`, at most 256 characters. */
  readonly ua: string | undefined;
  /** `HTTP/1.1`, `HTTP/1.0`. */
  readonly proto: string;
}

/** The access record's fields about the client and its connection. */
export type Peer = Pick<AccessRecord, 'remote' | 'ua' | 'proto'>;

/** `User-Agent` values a server keeps as logged: clients send one on every request, and most traffic comes from a few. */
const AGENTS_KEPT = 256;

/** A caller's request id is kept only if it cannot inject anything into logs or headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A JWT (three base64url segments): a client that sends its token as its request id must not see it echoed. */
const JWT_SHAPED = /^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$/;

/** 74 random bits as the first four groups of a version 8 UUID (RFC 9562), and its last group's `-`. */
function idPrefix(): string {
  const bytes = randomBytes(10);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-`;
}

/**
 * An id's last two hex digits, by the count's low byte: an id is one concatenation of the head
 * below and one of these, not a number printed in hex and padded per request.
 */
const LOW_DIGITS = Array.from({ length: 256 }, (_, low) => low.toString(16).padStart(2, '0'));

/** What one server reads of each request as it arrives, for its log: its id and its client's fields. */
export class ArrivalFields {
  /**
   * Ids this server makes are UUIDs (RFC 9562 version 8, whose layout is the implementer's): 74
   * random bits drawn once per server, then a 48-bit count of the ids it made. They are as unique
   * across a fleet as random ones, without a random draw per request (`randomUUID` was a visible
   * part of a cache hit's cost); they are not secrets.
   */
  readonly #prefix = idPrefix();
  #made = 0;
  /** The prefix and the count's first ten hex digits, made again when the low byte wraps. */
  #head = `${this.#prefix}0000000000`;
  readonly #agents = new BoundedMemo<string, string>(AGENTS_KEPT);

  /** Propagates a well-formed `X-Request-Id`; anything else is replaced, never echoed. */
  requestId(header: string | string[] | undefined): string {
    if (typeof header === 'string' && SANE_REQUEST_ID.test(header) && !JWT_SHAPED.test(header)) return header;
    const low = ++this.#made & 0xff;
    if (low === 0)
      this.#head =
        this.#prefix +
        Math.floor(this.#made / 256)
          .toString(16)
          .padStart(10, '0');
    return this.#head + (LOW_DIGITS[low] ?? '');
  }

  peer(req: RequestHead, clients: ClientAddress): Peer {
    const { httpVersion } = req;
    // The two common ones as constants: a string made per request is one more object a hit leaves behind.
    const proto = httpVersion === '1.1' ? 'HTTP/1.1' : httpVersion === '2.0' ? 'HTTP/2.0' : `HTTP/${httpVersion}`;
    return { remote: clients.client(req), ua: this.#loggedAgent(req.headers['user-agent']), proto };
  }

  /** `User-Agent` as logged: at most 256 characters, any JWT in it written REDACTED. */
  #loggedAgent(ua: string | undefined): string | undefined {
    if (ua === undefined) return undefined;
    return this.#agents.get(ua) ?? this.#agents.keep(ua, redactJwts(ua.length <= 256 ? ua : ua.slice(0, 256)));
  }
}

export type AccessLog<R extends AccessRecord = AccessRecord> = (record: R) => void;

export type LogFormat = 'json' | 'combined';

export interface AccessLogOptions<R extends AccessRecord = AccessRecord> {
  readonly enabled: boolean;
  readonly format: LogFormat;
  /** The server's name, ending each `combined` line as `service=…`. */
  readonly service: string;
  /** The fields a server adds to the shared ones (the gateway's cache result), in the order they are written. */
  readonly extraFields?: readonly (Exclude<keyof R, keyof AccessRecord> & string)[];
}

export function createAccessLog<R extends AccessRecord>(logger: Logger, options: AccessLogOptions<R>): AccessLog<R> {
  // The level is fixed at start-up, so a disabled access log costs one call to an empty function.
  if (!options.enabled || !logger.isLevelEnabled('info')) return () => undefined;
  const { service } = options;
  const extra = options.extraFields ?? [];
  const write = lineWriter<R>(logger);
  if (options.format === 'combined') {
    const clock = new CommonLogTime();
    const make = (record: R, at: number): string => combinedLine(record, extra, clock.at(at), service);
    return (record) => {
      write(record, make);
    };
  }
  const head = '{"level":"info"';
  const stamp = new TimeStamp();
  const tail = `,"service":${JSON.stringify(service)},`;
  // Concatenated, not joined: the sink's write flattens the pieces in C++ as it copies them,
  // which measured 60–90 ns a line less than `join` making the flat string first (2,000,000
  // 330-character lines into a 1 MiB block, one core).
  const make = (record: R, at: number): string => head + stamp.field(at) + tail + jsonFields(record, extra) + END;
  return (record) => {
    write(record, make);
  };
}

const END = ',"msg":"request"}\n';

/**
 * The record's fields as JSON members, in the order pino would write them, without pino: one
 * template per line instead of its generic serializer (the largest cost of a cache hit after the
 * socket write; docs/performance.md). Strings that a client chose go through JSON.stringify; the
 * rest are numbers, or strings the server made or checked (method token, request id pattern,
 * IP address, protocol), so they need no escaping.
 */
function jsonFields<R extends AccessRecord>(record: R, extra: readonly (keyof R & string)[]): string {
  let line = `"reqId":"${record.reqId}","method":"${record.method}","path":${jsonString(record.path)},"status":${record.status},"bytes":${record.bytes},"durationMs":${msText(record.durationMs)}`;
  for (const name of extra) {
    const value = record[name];
    // A coding may be the origin's own Content-Encoding, so strings are still checked.
    if (value !== undefined) line += typeof value === 'string' ? `,"${name}":${jsonString(value)}` : `,"${name}":${String(value)}`;
  }
  if (record.sub !== undefined) line += `,"sub":${jsonString(record.sub)}`;
  if (record.remote !== undefined) line += `,"remote":"${record.remote}"`;
  if (record.ua !== undefined) line += `,"ua":${jsonString(record.ua)}`;
  return `${line},"proto":"${record.proto}"`;
}

/**
 * Whether JSON.stringify would escape anything in `value`: a quote, a backslash, a control
 * character or a surrogate (any, to keep the test simple). A loop, not a regular expression: the
 * strings are short, and a call into the regular expression engine per field cost more than the
 * loop does (docs/performance.md).
 */
function needsEscape(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

/** A string as JSON; most paths and user agents need no escaping, and a test is cheaper than JSON.stringify. */
function jsonString(value: string): string {
  return needsEscape(value) ? JSON.stringify(value) : `"${value}"`;
}

/** A millisecond's fraction in microseconds as `String` ends a number ("", ".5", ".125"), by its 1,000 values. */
const FRACTIONS = Array.from({ length: 1000 }, (_, us) => (us === 0 ? '' : `.${String(us).padStart(3, '0').replace(/0+$/, '')}`));

/**
 * Milliseconds rounded to the microsecond (roundMs), printed as `String` prints them ("0.12",
 * "3"), from integers: printing a fraction takes V8's slow path for doubles, about 150 ns a line.
 */
function msText(ms: number): string {
  const us = Math.round(ms * 1000);
  if (!Number.isSafeInteger(us) || us < 0) return String(ms);
  const whole = Math.floor(us / 1000);
  return String(whole) + (FRACTIONS[us - whole * 1000] ?? '');
}

/** A field as it may stand in a quoted or bare part of a line: no quotes, no control characters. */
function safe(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    out += code < 0x20 || code === 0x7f || code === 0x22 || code === 0x5c ? `\\x${code.toString(16).padStart(2, '0')}` : value.charAt(i);
  }
  return out;
}

/**
 * nginx's `combined` format, then what it lacks: `$remote_addr - $remote_user [$time_local]
 * "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"` with the token subject
 * as the user and no referer kept, then `rt=` in seconds (nginx's `$request_time`), `reqid=`, the
 * server's own fields (the gateway's `cache=`, `originMs=`) and `service=`.
 */
function combinedLine<R extends AccessRecord>(record: R, extra: readonly (keyof R & string)[], time: string, service: string): string {
  let line = `${record.remote ?? '-'} - ${record.sub === undefined ? '-' : safe(record.sub)} [${time}] "${record.method} ${safe(record.path)} ${record.proto}" ${record.status} ${record.bytes} "-" "${record.ua === undefined ? '-' : safe(record.ua)}" rt=${(record.durationMs / 1000).toFixed(6)} reqid=${record.reqId}`;
  for (const name of extra) {
    const value = record[name];
    if (value !== undefined) line += ` ${name}=${safe(String(value))}`;
  }
  return `${line} service=${service}\n`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `23/Nov/2026:23:40:01 +0000`, formatted once a second. */
class CommonLogTime {
  #second = -1;
  #text = '';

  /** The time `ms` (since the epoch) as the line writes it. */
  at(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.#second) {
      this.#second = second;
      const d = new Date(ms);
      const two = (n: number): string => String(n).padStart(2, '0');
      this.#text = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()] ?? ''}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
    }
    return this.#text;
  }
}

/**
 * nginx's 499 (no HTTP status): the client went away before its answer was sent, which is not
 * the server's failure. What both servers log and count for such a request.
 */
export const CLIENT_CLOSED = 499;

/** Whether the client went away before `res` was sent whole: the answer is then logged as CLIENT_CLOSED. */
export function clientGone(res: Reply): boolean {
  return res.destroyed && !res.writableFinished;
}

/** Milliseconds as the log shows them: to the microsecond. */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
