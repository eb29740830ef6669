/**
 * The gateway's event registration at the origin (`gateway.events.register`): at start it makes
 * sure the origin sends availability events to this gateway's receiver, and learns the secret
 * they are signed with. The registration is kept in `<dataDir>/gateway-events.json` (mode 0600),
 * so a restarted gateway keeps the same one, and with it every delivery the origin queued while
 * it was down; it registers anew only when the origin no longer knows it or the receiver URL
 * changed (the old registration is then removed). Until it is registered, which is retried in
 * the background, the receiver answers 503 and the origin keeps its events.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { request } from 'undici';
import type { Logger } from '../../shared/logger.ts';

export interface RegistrationOptions {
  readonly origin: string;
  /** The URL the origin posts events to: this gateway's admin listener `/events`. */
  readonly receiver: string;
  /** A `catalog:admin` bearer token for the origin, made afresh for each attempt. */
  readonly token: () => Promise<string>;
  readonly file: string;
  readonly logger: Logger;
}

interface Saved {
  readonly origin: string;
  readonly id: string;
  readonly url: string;
  readonly secret: string;
}

const RETRY_MS = 2000;
const TIMEOUT_MS = 5000;

function load(file: string): Saved | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<Saved>;
    const { origin, id, url, secret } = saved;
    return typeof origin === 'string' && typeof id === 'string' && typeof url === 'string' && typeof secret === 'string' ? { origin, id, url, secret } : undefined;
  } catch {
    return undefined;
  }
}

async function call(options: RegistrationOptions, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await request(`${options.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${await options.token()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** The secret of a registration the origin knows for this receiver, registering if need be. */
async function register(options: RegistrationOptions): Promise<string> {
  const saved = load(options.file);
  if (saved !== undefined && saved.origin === options.origin) {
    const known = await call(options, 'GET', `/v1/webhooks/${saved.id}`);
    if (known.status === 200 && (known.json as { url?: unknown }).url === saved.url) {
      if (saved.url === options.receiver) return saved.secret;
      await call(options, 'DELETE', `/v1/webhooks/${saved.id}`);
    }
  }
  const created = await call(options, 'POST', '/v1/webhooks', { url: options.receiver, types: ['book.availability.changed'] });
  if (created.status !== 201) throw new Error(`the origin answered ${created.status} to the registration`);
  const { id, url, secret } = created.json as Saved;
  mkdirSync(dirname(options.file), { recursive: true });
  writeFileSync(options.file, `${JSON.stringify({ origin: options.origin, id, url, secret })}\n`, { mode: 0o600 });
  return secret;
}

export class EventRegistration {
  #secret: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #options: RegistrationOptions;

  constructor(options: RegistrationOptions) {
    this.#options = options;
  }

  /** The signing secret, once registered. */
  get secret(): string | undefined {
    return this.#secret;
  }

  /** Tries once now; resolves either way, and keeps retrying in the background on failure. */
  async start(): Promise<void> {
    try {
      this.#secret = await register(this.#options);
      this.#options.logger.info({ receiver: this.#options.receiver }, 'registered for availability events');
    } catch (err) {
      this.#options.logger.warn({ err: err instanceof Error ? err.message : String(err), retryMs: RETRY_MS }, 'event registration failed; retrying');
      if (this.#stopped) return;
      this.#timer = setTimeout(() => void this.start(), RETRY_MS);
      this.#timer.unref();
    }
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
