/**
 * Credentials in the request target (RFC 6750 §2.3 `?access_token=…`, and whatever parameter
 * names `http.credentialParameters` adds). Neither server accepts them: RFC 6750 allows a token
 * in the URI only where a client cannot send a header, every client of this API can, and a URI
 * ends up in logs, caches and browser history. A request carrying one is refused with 400 before
 * anything else, and the target is redacted wherever it is written: access log, error log,
 * problem `instance`. A fragment (never sent by a conforming client, but where OAuth implicit
 * flows put tokens) is redacted whole, and so is a user name and password in an absolute-form
 * target (`http://user:secret@host/…`), which RFC 9110 §4.2.4 has a recipient treat as an error.
 */
import { problem, type Problem } from './problem.ts';

export const REDACTED = 'REDACTED';

/** The scheme, authority's user information and its `@` of an absolute-form target that has any. */
const USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i;

/**
 * `http.credentialParameters` parsed, with one regular expression for the cheap test every
 * target pays: a fragment, a parameter of one of the names, or a parameter name with a
 * percent-escape (which might decode to one). Only a target it matches is taken apart.
 */
export class CredentialNames {
  /** Lower-case. */
  readonly names: readonly string[];
  readonly #suspect: RegExp;

  constructor(names: readonly string[]) {
    this.names = names;
    const alternatives = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    this.#suspect = new RegExp(`#|[?&](?:${alternatives === '' ? '(?!)' : alternatives})(?:[=&]|$)|[?&][^=&]*%|${USERINFO.source}`, 'i');
  }

  mayCarry(target: string): boolean {
    return this.#suspect.test(target);
  }

  named(pair: string): boolean {
    return this.names.includes(decodedName(pair));
  }
}

/** `http.credentialParameters`: comma-separated names, compared case-insensitively. */
export function parseCredentialNames(setting: string): CredentialNames {
  return new CredentialNames(
    setting
      .split(',')
      .map((n) => n.trim().toLowerCase())
      .filter((n) => n !== ''),
  );
}

export const NO_CREDENTIAL_NAMES = new CredentialNames([]);

function decodedName(pair: string): string {
  const eq = pair.indexOf('=');
  const raw = (eq === -1 ? pair : pair.slice(0, eq)).replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** A target taken apart: what precedes the query (with its `?`), the query's pairs, and whether a fragment followed. */
interface Parts {
  readonly head: string;
  readonly pairs: readonly string[];
  readonly fragment: boolean;
}

function parts(target: string): Parts {
  const hash = target.indexOf('#');
  const beforeHash = hash === -1 ? target : target.slice(0, hash);
  const q = beforeHash.indexOf('?');
  return {
    head: q === -1 ? beforeHash : beforeHash.slice(0, q + 1),
    pairs: q === -1 ? [] : beforeHash.slice(q + 1).split('&'),
    fragment: hash !== -1,
  };
}

/**
 * A JWT anywhere in a string: its first segment is base64url JSON, so it starts `eyJ`. A client
 * that sends its token where no credential is expected (`User-Agent`, a query parameter of
 * another name, a path segment) would otherwise have it written to the logs.
 */
const JWT_INSIDE = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;

/** `text` with every JWT in it written `REDACTED`. */
export function redactJwts(text: string): string {
  return text.includes('eyJ') ? text.replace(JWT_INSIDE, REDACTED) : text;
}

declare const redacted: unique symbol;

/** A target as it may be written anywhere: only `redactTarget` makes one. */
export type RedactedTarget = string & { readonly [redacted]: true };

/**
 * The target with the value of every credential parameter, any fragment and any JWT replaced by
 * `REDACTED`.
 */
export function redactTarget(target: string, names: CredentialNames): RedactedTarget {
  return redactJwts(redactNamed(target, names)) as RedactedTarget;
}

function redactNamed(target: string, names: CredentialNames): string {
  if (!names.mayCarry(target)) return target;
  const userinfo = USERINFO.exec(target)?.[0];
  const scheme = userinfo === undefined ? '' : `${userinfo.slice(0, userinfo.indexOf('://') + 3)}${REDACTED}@`;
  const { head, pairs, fragment } = parts(userinfo === undefined ? target : target.slice(userinfo.length));
  const redacted = pairs.map((pair) => {
    if (!names.named(pair)) return pair;
    const eq = pair.indexOf('=');
    return `${eq === -1 ? pair : pair.slice(0, eq)}=${REDACTED}`;
  });
  return `${scheme}${head}${redacted.join('&')}${fragment ? `#${REDACTED}` : ''}`;
}

const IN_TARGET = problem('credentials-in-target', 'send the token in the Authorization header; a token in the URI is not accepted (RFC 6750 §2.3)');

const USERINFO_IN_TARGET = problem('credentials-in-target', 'a user name or password in the URI is not accepted (RFC 9110 §4.2.4)');

/** A 400 problem when the target carries user information or its query names a credential parameter. */
export function credentialsInTarget(target: string, names: CredentialNames): Problem | undefined {
  if (!names.mayCarry(target)) return undefined;
  if (USERINFO.test(target)) return USERINFO_IN_TARGET;
  return parts(target).pairs.some((pair) => names.named(pair)) ? IN_TARGET : undefined;
}
