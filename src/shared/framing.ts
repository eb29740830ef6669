/**
 * Strict message framing (RFC 9112), checked by both servers before anything else: requests a
 * lenient server accepts and a stricter one in front or behind reads differently are how
 * request smuggling and cache poisoning start. Each refusal is a 400 problem and closes the
 * connection, since what follows on it cannot be trusted to start where the server thinks.
 */
import { BoundedMemo } from './bounded-memo.ts';
import type { RequestHead } from './message-seam.ts';
import { problem, type Problem } from './problem.ts';

const CLOSE = { connection: 'close' } as const;

function refuse(detail: string): Problem {
  return problem('malformed-request', detail, CLOSE);
}

const NO_HOST = refuse('an HTTP/1.1 request carries exactly one Host header field (RFC 9112 §3.2)');
const TWO_HOSTS = refuse('more than one Host header field (RFC 9112 §3.2)');
const TWO_AUTHORIZATIONS = refuse('more than one Authorization header field: its value is a single credential, not a list (RFC 9110 §5.3, §11.6.2)');
const CODING = refuse('chunked must be the final and only transfer coding of a request (RFC 9112 §6.3)');
const FRAGMENT = refuse('a request target never carries a fragment (RFC 9112 §3.2)');
const TARGET_FORM = refuse('a request target is a path or an absolute http(s) URL: no other form (such as *) is served (RFC 9112 §3.2)');
const BAD_HOST = refuse('the Host header field is not a host and an optional port (RFC 9112 §3.2, RFC 3986 §3.2.2)');
const OTHER_AUTHORITY = refuse('the Host header field names another authority than :authority (RFC 9113 §8.3.1)');

const SLASH = 0x2f;
const ABSOLUTE_HTTP = /^https?:\/\//i;

/**
 * RFC 9110 §7.2: `uri-host [ ":" port ]`, an IP literal or a registered name (empty included).
 * What a lenient hop reads otherwise (`x/evil`, `user@x`, a space) is where links built from the
 * Host go astray; nginx refuses such a field too.
 */
const HOST_VALUE = /^(?:\[[0-9A-Za-z\-._~!$&'()*+,;=:]+\]|(?:[0-9A-Za-z\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

/** Host values whose verdict a server keeps: a client sends one Host on every request, and most traffic names a few. */
const HOSTS_KEPT = 64;

/**
 * Whether a raw field name is `lower`: most clients spell it `capitalised` or `lower`, and only
 * another spelling is lower-cased (a new string).
 */
function named(name: string | undefined, capitalised: string, lower: string): boolean {
  return name === capitalised || name === lower || (name?.length === lower.length && name.toLowerCase() === lower);
}

/**
 * One server's framing checks. It keeps the verdicts of the Host values it saw, so that a hit
 * runs the expression only for a new one.
 */
export class Framing {
  readonly #hosts = new BoundedMemo<string, boolean>(HOSTS_KEPT);

  problem(req: RequestHead): Problem | undefined {
    let hosts = 0;
    let authorizations = 0;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i];
      if (named(name, 'Host', 'host')) hosts++;
      else if (named(name, 'Authorization', 'authorization')) authorizations++;
    }
    if (hosts > 1) return TWO_HOSTS;
    // Node keeps the first of two and drops the other; a hop in front that checks the last would
    // let one credential be judged and another used.
    if (authorizations > 1) return TWO_AUTHORIZATIONS;
    if (hosts === 0 && req.httpVersionMinor >= 1 && req.httpVersionMajor === 1) return NO_HOST;
    // Over HTTP/2 the listener has copied `:authority` into Host when the client sent no Host
    // (listeners/listener.ts); one it did send must name the same authority, or the two hops that
    // read one or the other would serve different hosts.
    const { host, ':authority': authority } = req.headers;
    if (host !== undefined && !this.#validHost(host)) return BAD_HOST;
    if (typeof authority === 'string' && host !== undefined && host !== authority && host.toLowerCase() !== authority.toLowerCase()) return OTHER_AUTHORITY;
    const coding = req.headers['transfer-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') return CODING;
    const target = req.url ?? '/';
    if (target.includes('#')) return FRAGMENT;
    // Node's parser lets `*` and any scheme's absolute-form through. Forwarded, such a target was
    // refused by undici as it was dispatched, which leaves a connection of the pool taken for good
    // (undici 8.12, as with `Expect`, steps/forward.ts): a few `GET *` stopped every origin request.
    if (target.charCodeAt(0) !== SLASH && !ABSOLUTE_HTTP.test(target)) return TARGET_FORM;
    return undefined;
  }

  #validHost(host: string): boolean {
    return this.#hosts.get(host) ?? this.#hosts.keep(host, HOST_VALUE.test(host));
  }
}
