/**
 * The gateway's event registration at the origin (`gateway.events.register`): at start it makes
 * sure the origin sends availability events to this gateway's receiver, and learns the secret
 * they are signed with. The registration is kept in `<dataDir>/gateway-events.json` (mode 0600),
 * so a restarted gateway keeps the same one, and with it every delivery the origin queued while
 * it was down; it registers anew only when the origin no longer knows it or the receiver URL
 * changed (the old registration is then removed). Until it is registered, which is retried in
 * the background, the receiver answers 503 and the origin keeps its events.
 *
 * In a fleet (docs/fleet.md), the replicas behind one public receiver URL
 * (`gateway.events.receiverUrl`) share one registration: the origin answers a registration of a
 * URL it knows with that registration and its secret. A gateway with a registration of its own
 * that stops for good (`gateway.events.unregisterOnStop`: a scale-down, not a restart) removes it
 * on its way out; a shared one stays for the replicas left.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  /** Remove the registration at stop (it is this gateway's own, and the gateway is going for good). */
  readonly removeOnStop: boolean;
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
    return typeof origin === 'string' && typeof id === 'string' && typeof url === 'string' && typeof secret === 'string'
      ? { origin, id, url, secret }
      : undefined;
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

/** A registration the origin knows for this receiver, registering (or joining the one of its URL) if need be. */
async function register(options: RegistrationOptions): Promise<Saved> {
  const saved = load(options.file);
  if (saved !== undefined && saved.origin === options.origin) {
    const known = await call(options, 'GET', `/v1/webhooks/${saved.id}`);
    const { url, state } = known.json as { url?: unknown; state?: unknown };
    if (known.status === 200 && url === saved.url) {
      // A disabled one is registered again below, which enables it.
      if (saved.url === options.receiver && state !== 'disabled') return saved;
      if (saved.url !== options.receiver) await call(options, 'DELETE', `/v1/webhooks/${saved.id}`);
    }
  }
  const created = await call(options, 'POST', '/v1/webhooks', { url: options.receiver, types: ['book.availability.changed'] });
  // 200: the origin had this URL registered already (another replica's, or this one's).
  if (created.status !== 201 && created.status !== 200) throw new Error(`the origin answered ${created.status} to the registration`);
  const { id, url, secret } = created.json as Saved;
  const registered = { origin: options.origin, id, url, secret };
  mkdirSync(dirname(options.file), { recursive: true });
  writeFileSync(options.file, `${JSON.stringify(registered)}\n`, { mode: 0o600 });
  return registered;
}

export class EventRegistration {
  #registered: Saved | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #options: RegistrationOptions;

  constructor(options: RegistrationOptions) {
    this.#options = options;
  }

  /** The signing secret, once registered. */
  get secret(): string | undefined {
    return this.#registered?.secret;
  }

  /** Tries once now; resolves either way, and keeps retrying in the background on failure. */
  async start(): Promise<void> {
    try {
      this.#registered = await register(this.#options);
      this.#options.logger.info({ receiver: this.#options.receiver }, 'registered for availability events');
    } catch (err) {
      this.#options.logger.warn({ err: err instanceof Error ? err.message : String(err), retryMs: RETRY_MS }, 'event registration failed; retrying');
      if (this.#stopped) return;
      this.#timer = setTimeout(() => void this.start(), RETRY_MS);
      this.#timer.unref();
    }
  }

  /** Stops retrying; with `removeOnStop`, removes the registration (its queued events go with it). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const registered = this.#registered;
    if (!this.#options.removeOnStop || registered === undefined) return;
    try {
      const removed = await call(this.#options, 'DELETE', `/v1/webhooks/${registered.id}`);
      rmSync(this.#options.file, { force: true });
      this.#options.logger.info({ webhook: registered.id, status: removed.status }, 'event registration removed: this gateway is going for good');
    } catch (err) {
      this.#options.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'removing the event registration failed; the origin disables it after origin.events.disableAfterSeconds',
      );
    }
  }
}
