/**
 * docs/openapi.json against the origin's real responses: every documented status of every
 * operation is provoked with a real request, and its headers and body are validated against the
 * document with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1). The problem types listed
 * in docs/problems.md are those of src/shared/problem.ts.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { PROBLEM_BASE, PROBLEM_KINDS } from '../../src/shared/problem.ts';
import { tempDir } from '../support/config.ts';
import { send, type Reply } from '../support/harness.ts';
import { conforms, doc, follow, type Method, type ResponseObject } from '../support/openapi.ts';
import { openBusyConnection, sharedCatalog, startOriginFixture, type BusyConnection, type OriginFixture } from '../support/origin-fixture.ts';

/** The concrete request used for each path template. */
const TARGETS: Readonly<Record<string, string>> = {
  '/v1/books': '/v1/books?q=river',
  '/v1/books/{id}': '/v1/books/bk_1',
  '/v1/branches': '/v1/branches',
  '/v1/branches/{id}': '/v1/branches/branch_central',
};
/** The circulation paths (contract, "Loans, events and tags") and the methods each documents. */
const CIRCULATION: Readonly<Record<string, readonly Method[]>> = {
  '/v1/loans': ['post'],
  '/v1/loans/{id}': ['get', 'head', 'delete'],
  '/v1/webhooks': ['get', 'head', 'post'],
  '/v1/webhooks/{id}': ['get', 'head', 'delete'],
  '/v1/events': ['get', 'head'],
};
/** A cursor past the end of any test catalog's event log. */
const FOREIGN_CURSOR = '/v1/events?after=999999999';
const withParam = (target: string, param: string): string => `${target}${target.includes('?') ? '&' : '?'}${param}`;

describe('docs/openapi.json and the origin agree', () => {
  let f: OriginFixture;
  let limited: OriginFixture;
  let broken: OriginFixture;
  let draining: OriginFixture;
  const busy = new Map<string, BusyConnection>();

  before(async () => {
    f = await startOriginFixture();
    limited = await startOriginFixture({ 'origin.rateLimitPerMinute': 1 });
    const corrupt = join(tempDir(), 'catalog.db');
    copyFileSync(sharedCatalog(), corrupt);
    broken = await startOriginFixture({ 'origin.db': corrupt });
    // A disk fault, for real: the open database file is overwritten with garbage.
    writeFileSync(corrupt, Buffer.alloc(statSync(corrupt).size, 0x5a));
    draining = await startOriginFixture();
    const token = await draining.token();
    for (const [template, target] of Object.entries(TARGETS)) {
      for (const method of ['GET', 'HEAD']) busy.set(`${method} ${template}`, await openBusyConnection(draining.origin.url, token, method, target));
    }
    busy.set('kinds', await openBusyConnection(draining.origin.url, token, 'GET', '/v1/branches'));
    const admin = await draining.token({ scope: 'catalog:read catalog:admin catalog:write' });
    for (const [template, methods] of Object.entries(CIRCULATION)) {
      const target = template.replace('{id}', template.startsWith('/v1/loans') ? 'ln_1' : 'wh_1');
      for (const method of methods)
        busy.set(`${method.toUpperCase()} ${template}`, await openBusyConnection(draining.origin.url, admin, method.toUpperCase(), target));
    }
    void draining.stop();
  });
  after(async () => {
    for (const connection of busy.values()) connection.close();
    await Promise.all([f.stop(), limited.stop(), broken.stop(), draining.stop()]);
  });

  type Provoke = (template: string, method: string) => Promise<Reply>;
  let subjects = 0;
  const provocations: Readonly<Record<string, Provoke>> = {
    '200': (template, method) => f.get(TARGETS[template] ?? '', {}, method),
    '304': async (template, method) => {
      const etag = String((await f.get(TARGETS[template] ?? '')).headers.etag);
      return f.get(TARGETS[template] ?? '', { 'if-none-match': etag }, method);
    },
    '400': (template, method) => f.get(template === '/v1/books' ? '/v1/books?q=river&limit=0' : withParam(TARGETS[template] ?? '', 'page=2'), {}, method),
    '401': (template, method) => f.anonymous(TARGETS[template] ?? '', {}, method),
    '403': async (template, method) => f.get(TARGETS[template] ?? '', { authorization: `Bearer ${await f.token({ scope: 'profile' })}` }, method),
    '404': (template, method) => f.get(template === '/v1/books/{id}' ? '/v1/books/bk_99999999' : '/v1/branches/branch_atlantis', {}, method),
    '414': (template, method) => f.anonymous(withParam(TARGETS[template] ?? '', `pad=${'x'.repeat(2048)}`), {}, method),
    '429': async (template, method) => {
      const authorization = `Bearer ${await limited.token({ subject: `subject ${++subjects}` })}`;
      assert.equal((await limited.get(TARGETS[template] ?? '', { authorization }, method)).status, 200);
      return limited.get(TARGETS[template] ?? '', { authorization }, method);
    },
    '500': (template, method) => broken.get(TARGETS[template] ?? '', {}, method),
    '503': (template, method) => {
      const connection = busy.get(`${method} ${template}`);
      assert.ok(connection !== undefined);
      return connection.finish();
    },
  };

  test('the document is OpenAPI 3.1 with a bearer security scheme and no dangling references', () => {
    assert.match(doc.openapi, /^3\.1\./);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] ?? '');
    for (const $ref of new Set(refs)) follow({ $ref });
    const originPaths = Object.entries(doc.paths).filter(([, item]) => !(item as { 'x-admin-listener'?: boolean })['x-admin-listener']);
    // The gateway admin listener's paths are checked against the gateway: test/gateway/admin-openapi.test.ts.
    assert.deepEqual(originPaths.map(([path]) => path).sort(), [...Object.keys(TARGETS), ...Object.keys(CIRCULATION)].sort());
  });

  for (const [template, item] of Object.entries(TARGETS).map(([t]) => [t, doc.paths[t]] as const)) {
    for (const method of ['get', 'head'] as const) {
      test(`${method.toUpperCase()} ${template}: every documented status is reachable and conforms`, async () => {
        const operation = item?.[method];
        assert.ok(operation !== undefined, `${method} ${template} is documented`);
        const documented = Object.entries(operation.responses)
          .map(([status, spec]) => [status, follow<ResponseObject>(spec)] as const)
          .filter(([, response]) => response['x-gateway-only'] !== true);
        assert.deepEqual(
          documented.map(([s]) => s).sort(),
          Object.keys(provocations)
            .filter((s) => s !== '404' || template.endsWith('{id}'))
            .sort(),
          'documented statuses are exactly those the origin can answer',
        );
        for (const [status, response] of documented) {
          const provoke = provocations[status];
          assert.ok(provoke !== undefined, `no way to provoke ${status}`);
          const reply = await provoke(template, method.toUpperCase());
          const what = `${method.toUpperCase()} ${template} ${status}`;
          assert.equal(String(reply.status), status, `${what}: ${reply.body}`);
          conforms(reply, response, method, what);
        }
      });
    }
  }

  describe('circulation', () => {
    let free: readonly { book: string; branch: string }[] = [];
    let next = 0;
    const url = (fixture: OriginFixture, target: string): string => `${fixture.origin.url}${target}`;
    const as = async (fixture: OriginFixture, scope: string, subject = 'tester'): Promise<Record<string, string>> => ({
      authorization: `Bearer ${await fixture.token({ scope, subject })}`,
    });
    const scopeOf = (template: string): string => (template.startsWith('/v1/loans') ? 'catalog:write' : 'catalog:admin');
    /** A live resource for `{id}` paths: a fresh loan or registration. */
    const resource = async (fixture: OriginFixture, template: string): Promise<string> => {
      const headers = await as(fixture, scopeOf(template), `maker ${++subjects}`);
      if (template.startsWith('/v1/loans')) {
        const holding = free[next++];
        assert.ok(holding !== undefined, 'enough free holdings');
        const lent = await send(url(fixture, '/v1/loans'), 'POST', headers, holding);
        return lent.headers.location as string;
      }
      return (await send(url(fixture, '/v1/webhooks'), 'POST', headers, { url: `https://example.invalid/hook/${++subjects}` })).headers.location as string;
    };
    const target = async (fixture: OriginFixture, template: string): Promise<string> => (template.endsWith('{id}') ? resource(fixture, template) : template);
    // A URL of its own each time: registering a URL already registered answers that registration (200).
    const goodBody = (template: string): unknown => (template === '/v1/loans' ? free[next++] : { url: `https://example.invalid/hook/${++subjects}` });
    const call = async (fixture: OriginFixture, template: string, method: string, headers: Record<string, string>): Promise<Reply> =>
      send(url(fixture, await target(fixture, template)), method, headers, method === 'POST' ? goodBody(template) : undefined);

    before(() => {
      const db = new DatabaseSync(sharedCatalog(), { readOnly: true });
      free = db
        .prepare('SELECT book_id, min(branch_id) AS branch_id FROM holding WHERE on_loan = 0 GROUP BY book_id LIMIT 200')
        .all()
        .map((r) => ({ book: `bk_${r.book_id as number}`, branch: r.branch_id as string }));
      db.close();
    });

    const provoke: Readonly<Record<string, (template: string, method: string) => Promise<Reply>>> = {
      '200': async (template, method) => {
        if (method !== 'POST') return call(f, template, method, await as(f, scopeOf(template)));
        const body = goodBody(template);
        const headers = await as(f, scopeOf(template));
        assert.equal((await send(url(f, template), method, headers, body)).status, 201);
        return send(url(f, template), method, headers, body);
      },
      '201': async (template, method) => call(f, template, method, await as(f, scopeOf(template))),
      '400': async (template, method) => {
        const headers = await as(f, scopeOf(template));
        return send(url(f, withParam(await target(f, template), 'page=2')), method, headers, method === 'POST' ? goodBody(template) : undefined);
      },
      '204': async (template, method) => call(f, template, method, await as(f, scopeOf(template))),
      '401': async (template, method) => call(f, template, method, {}),
      '403': async (template, method) => call(f, template, method, await as(f, 'catalog:read')),
      '404': async (template, method) => {
        const headers = await as(f, scopeOf(template));
        if (method === 'POST') return send(url(f, template), method, headers, { book: 'bk_99999999', branch: 'branch_central' });
        return send(url(f, template.startsWith('/v1/loans') ? '/v1/loans/ln_999999' : '/v1/webhooks/wh_999999'), method, headers);
      },
      '409': async (template, method) => {
        const holding = free[next++];
        const headers = await as(f, scopeOf(template));
        for (;;) {
          const reply = await send(url(f, template), method, headers, holding);
          if (reply.status !== 201) return reply;
        }
      },
      '413': async (template, method) => send(url(f, template), method, await as(f, scopeOf(template)), { pad: 'x'.repeat(20_000) }),
      '410': async (template, method) => send(url(f, FOREIGN_CURSOR), method, await as(f, scopeOf(template))),
      '415': async (template, method) => send(url(f, template), method, { ...(await as(f, scopeOf(template))), 'content-type': 'text/plain' }, 'x'),
      '422': async (template, method) => send(url(f, template), method, await as(f, scopeOf(template)), '[1]'),
      '429': async (template, method) => {
        const headers = await as(limited, scopeOf(template), `subject ${++subjects}`);
        assert.notEqual((await call(limited, template, method, headers)).status, 429);
        return call(limited, template, method, headers);
      },
      '500': async (template, method) =>
        send(
          url(broken, template.replace('{id}', template.startsWith('/v1/loans') ? 'ln_1' : 'wh_1')),
          method,
          await as(broken, scopeOf(template)),
          method === 'POST' ? goodBody(template) : undefined,
        ),
      '503': (template, method) => {
        const connection = busy.get(`${method} ${template}`);
        assert.ok(connection !== undefined);
        return connection.finish();
      },
    };

    for (const [template, methods] of Object.entries(CIRCULATION)) {
      for (const method of methods) {
        test(`${method.toUpperCase()} ${template}: every documented status is reachable and conforms`, async () => {
          const operation = doc.paths[template]?.[method];
          assert.ok(operation !== undefined, `${method} ${template} is documented`);
          const documented = Object.entries(operation.responses)
            .map(([status, spec]) => [status, follow<ResponseObject>(spec)] as const)
            .filter(([, response]) => response['x-gateway-only'] !== true);
          for (const [status, response] of documented) {
            const how = provoke[status];
            assert.ok(how !== undefined, `no way to provoke ${status}`);
            const reply = await how(template, method.toUpperCase());
            const what = `${method.toUpperCase()} ${template} ${status}`;
            assert.equal(String(reply.status), status, `${what}: ${reply.body}`);
            conforms(reply, response, method, what);
          }
        });
      }
    }
  });

  test('405 on each path conforms to MethodNotAllowed', async () => {
    const response = doc.components.responses.MethodNotAllowed;
    assert.ok(response !== undefined);
    for (const target of Object.values(TARGETS)) conforms(await f.anonymous(target, {}, 'DELETE'), response, 'get', `DELETE ${target}`);
  });

  test('every problem kind the origin has is provoked and conforms to its documented response', async () => {
    const responses = doc.components.responses;
    const scopeless = `Bearer ${await f.token({ scope: 'profile' })}`;
    const kinds: [() => Promise<Reply>, string][] = [
      [() => f.get('/v1/books?q=river&limit=0'), 'BadRequest'],
      [() => f.get('/v1/books?q=river&sort=title'), 'BadRequest'],
      [() => f.get('/v1/books?q=river&cursor=AAAA'), 'BadRequest'],
      [() => f.anonymous('/v1/books?q=river&access_token=secret'), 'BadRequest'],
      [() => f.anonymous('/v1/books?q=river'), 'Unauthorized'],
      [() => f.get('/v1/books?q=river', { authorization: 'Bearer x.y.z' }), 'Unauthorized'],
      [() => f.get('/v1/books?q=river', { authorization: scopeless }), 'Forbidden'],
      [() => f.anonymous('/search', {}, 'POST'), 'NotFound'],
      [() => f.anonymous('/v1/books?q=river', {}, 'PUT'), 'MethodNotAllowed'],
      [() => f.anonymous(`/v1/books?q=${'x'.repeat(2048)}`), 'UriTooLong'],
      [() => provocations['429']?.('/v1/books', 'GET') ?? Promise.reject(new Error('no 429')), 'TooManyRequests'],
      [() => broken.get('/v1/branches'), 'InternalError'],
      [() => busy.get('kinds')?.finish() ?? Promise.reject(new Error('no busy connection')), 'NotReady'],
      [
        async () => send(`${f.origin.url}/v1/loans`, 'POST', { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` }, '{'),
        'UnprocessableContent',
      ],
      [async () => send(`${f.origin.url}${FOREIGN_CURSOR}`, 'GET', { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` }), 'Gone'],
      [
        async () =>
          send(`${f.origin.url}/v1/loans`, 'POST', { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}`, 'content-type': 'text/plain' }, 'x'),
        'UnsupportedMediaType',
      ],
      [
        async () => send(`${f.origin.url}/v1/loans`, 'POST', { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` }, 'x'.repeat(17_000)),
        'PayloadTooLarge',
      ],
      [
        async () => {
          const headers = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
          const db = new DatabaseSync(sharedCatalog(), { readOnly: true });
          const row = db.prepare('SELECT book_id, branch_id FROM holding WHERE on_loan = copies LIMIT 1').get();
          db.close();
          return send(`${f.origin.url}/v1/loans`, 'POST', headers, { book: `bk_${row?.book_id as number}`, branch: row?.branch_id });
        },
        'Conflict',
      ],
    ];
    const seen = new Set<string>();
    for (const [provoke, name] of kinds) {
      const reply = await provoke();
      const response = responses[name];
      assert.ok(response !== undefined, name);
      conforms(reply, response, 'get', `${name}: ${reply.body}`);
      seen.add((JSON.parse(reply.body) as { type: string }).type);
    }
    const gatewayOnly = [
      'bad-gateway',
      'gateway-timeout',
      'not-cached',
      'plain-http-to-https',
      'precondition-failed',
      'range-not-satisfiable',
      'webhook-signature',
      'webhook-replayed',
    ];
    // Refused before any operation is known: by the HTTP parser (test/shared/client-errors.test.ts),
    // or for an `Expect` the server does not meet (test/gateway/edge.test.ts, both servers).
    const connectionLevel = ['malformed-request', 'not-implemented', 'headers-too-large', 'request-timeout', 'expectation-failed'];
    const originKinds = Object.keys(PROBLEM_KINDS).filter((k) => !gatewayOnly.includes(k) && !connectionLevel.includes(k));
    assert.deepEqual([...seen].sort(), originKinds.map((k) => `${PROBLEM_BASE}${k}`).sort());
  });
});

test('docs/problems.md lists exactly the problem kinds of src/shared/problem.ts, with their status and title', () => {
  const text = readFileSync(new URL('../../docs/problems.md', import.meta.url), 'utf8');
  const rows = [...text.matchAll(/^\| `([a-z-]+)` \| ([0-9]{3}) \| ([^|]+) \|/gm)].map((m) => [m[1], Number(m[2]), (m[3] ?? '').trim()]);
  assert.deepEqual(
    rows,
    Object.entries(PROBLEM_KINDS).map(([kind, { status, title }]) => [kind, status, title]),
  );
});
