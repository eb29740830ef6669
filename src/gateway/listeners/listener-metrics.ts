/**
 * What the API listener counts about its connections: certificate reloads and the certificate's
 * expiry (an alert in ops/prometheus/rules.yml reads it), HTTP/2 connections cut for rapid
 * reset, and every stream or connection the HTTP/2 guard refused or cut (connection-guard.ts).
 * Registered on the gateway's own registry, like the rest of its metrics.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Http2Refusal } from './http2-refusals.ts';
import type { TlsRefusal } from './tls-identity.ts';

export class ListenerMetrics {
  readonly #reloads: Counter<'result'>;
  readonly #expiry: Gauge;
  readonly #rapidResets: Counter;
  readonly #http2Refused: Counter<'reason'>;

  constructor(registry: Registry) {
    this.#reloads = new Counter({
      name: 'catalog_gateway_tls_reloads_total',
      help: 'Certificate reloads (SIGHUP or a changed file) by result: ok, or why the new pair was refused and the old one kept (unreadable, invalid, mismatch, expired).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.#expiry = new Gauge({
      name: 'catalog_gateway_tls_certificate_expiry_timestamp_seconds',
      help: "When the API listener's certificate in use expires (its notAfter), in seconds since the epoch.",
      registers: [registry],
    });
    this.#rapidResets = new Counter({
      name: 'catalog_gateway_http2_rapid_reset_total',
      help: 'HTTP/2 connections closed with GOAWAY (ENHANCE_YOUR_CALM) for resetting more streams a second than http.http2.maxResetsPerSecond (CVE-2023-44487).',
      registers: [registry],
    });
    this.#http2Refused = new Counter({
      name: 'catalog_gateway_http2_refused_total',
      help: "HTTP/2 streams and connections the listener refused or cut, by reason: send-timeout (an answer sent nothing for http.http2.sendTimeoutMs), queue-full (a new stream on a connection over http.http2.maxQueuedBytes), rapid-reset, bad-preface, preface-timeout, protocol-error (a frame nghttp2 refused: a stream made to depend on itself, a wrong size), flood (CONTINUATION or control frames past nghttp2's bounds).",
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  certificateInUse(expiresAt: number): void {
    this.#expiry.set(expiresAt);
  }

  reloaded(result: 'ok' | TlsRefusal): void {
    this.#reloads.inc({ result });
  }

  rapidReset(): void {
    this.#rapidResets.inc();
  }

  http2Refused(reason: Http2Refusal): void {
    this.#http2Refused.inc({ reason });
  }
}
