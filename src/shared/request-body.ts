/**
 * Reads a request body for the few endpoints that take one (loans, webhooks, purge, event
 * receipt): bounded, so a client cannot make a server buffer without limit, and JSON only, so
 * a form or text body is refused with 415 rather than half understood.
 */
import type { IncomingMessage } from 'node:http';
import { problem, type Problem } from './problem.ts';

export type BodyVerdict = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: Problem };

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** The body as text; 413 past `maxBytes` (declared or sent), 415 unless the media type is JSON. */
export function readJsonText(req: IncomingMessage, maxBytes: number): Promise<BodyVerdict> {
  if (!JSON_MEDIA.test(req.headers['content-type'] ?? '')) {
    req.resume();
    return Promise.resolve({ ok: false, problem: problem('unsupported-media-type', 'send the body as application/json') });
  }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
    req.resume();
    return Promise.resolve({ ok: false, problem: problem('body-too-large', `the body may be at most ${maxBytes} bytes`) });
  }
  // Listeners rather than `for await`: leaving an async iterator early destroys the request, and
  // with it the socket the refusal has to be written to.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.resume();
      resolve({ ok: false, problem: problem('body-too-large', `the body may be at most ${maxBytes} bytes`) });
    };
    req.on('data', onData);
    req.once('end', () => {
      if (length <= maxBytes) resolve({ ok: true, text: Buffer.concat(chunks, length).toString('utf8') });
    });
    req.once('error', reject);
  });
}

/** The body as a JSON object, or 422 naming what is wrong with it. */
export async function readJsonObject(
  req: IncomingMessage,
  maxBytes: number,
): Promise<{ readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly problem: Problem }> {
  const body = await readJsonText(req, maxBytes);
  if (!body.ok) return body;
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    return { ok: false, problem: problem('invalid-body', 'the body is not valid JSON') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problem: problem('invalid-body', 'the body must be a JSON object') };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * The first member of `body` that is not one of `members`, quoted and cut for a problem's detail:
 * a misspelt member is refused rather than dropped, as an unknown query parameter is.
 */
export function unknownMember(body: Readonly<Record<string, unknown>>, members: ReadonlySet<string>): string | undefined {
  const unknown = Object.keys(body).find((name) => !members.has(name));
  return unknown === undefined ? undefined : JSON.stringify(unknown.slice(0, 64));
}
