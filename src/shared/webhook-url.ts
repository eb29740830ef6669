/**
 * What the API accepts as a webhook receiver (POST /v1/webhooks): an absolute URL, `http:`
 * accepted beside the contract's `https:` so that a gateway on a private network or loopback can
 * receive, without credentials (they would be stored and shown), at most 2,048 characters. The
 * origin registers by it; the gateway's `gateway.events.receiverUrl` is checked by it at start, so
 * that a value the origin would refuse stops the gateway instead of failing every registration.
 */
const MAX_URL_LENGTH = 2048;

/** The URL as the origin keeps it, or undefined when it is not one a receiver may have. */
export function webhookUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' ? url.href : undefined;
}
