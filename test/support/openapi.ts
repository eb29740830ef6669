/**
 * docs/openapi.json for tests: the document, references followed, and a reply checked against a
 * documented response (status headers and body schemas, validated with ajv: JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Reply } from './harness.ts';

export interface SchemaRef {
  readonly $ref: string;
}
export interface HeaderObject {
  readonly required?: boolean;
  readonly schema: object;
}
export interface ResponseObject {
  readonly description: string;
  readonly 'x-gateway-only'?: boolean;
  readonly headers?: Readonly<Record<string, SchemaRef | HeaderObject>>;
  readonly content?: Readonly<Record<string, { readonly schema: SchemaRef }>>;
}
export interface Operation {
  readonly operationId: string;
  readonly responses: Readonly<Record<string, SchemaRef | ResponseObject>>;
}
export type Method = 'get' | 'head' | 'post' | 'delete';
export interface OpenApi {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Partial<Record<Method, Operation>>>>>;
  readonly components: { readonly responses: Readonly<Record<string, ResponseObject>> };
}

const DOC_URI = 'https://catalog.example/openapi.json';
export const doc = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as OpenApi;

// ajv-formats is CommonJS; its callable is the default export's default under NodeNext.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => void };
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// The document is not itself a schema (header objects say `required: true`), so it is added
// unvalidated and only its schema fragments are compiled, by JSON pointer.
ajv.addSchema(doc, DOC_URI, undefined, false);

export function follow<T>(value: SchemaRef | T): T {
  if (typeof value === 'object' && value !== null && '$ref' in value) {
    const path = value.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    let node: unknown = doc;
    for (const segment of path) node = (node as Record<string, unknown>)[segment];
    assert.ok(node !== undefined, `dangling ${value.$ref}`);
    return node as T;
  }
  return value;
}

export function validate(pointer: string, value: unknown, what: string): void {
  const check = ajv.getSchema(`${DOC_URI}${pointer}`);
  assert.ok(check !== undefined, `no schema at ${pointer}`);
  assert.ok(check(value), `${what}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
}

/** Checks a reply against the documented response: status, every required header, header and body schemas. */
export function conforms(reply: Reply, response: ResponseObject, method: Method, what: string): void {
  for (const [name, spec] of Object.entries(response.headers ?? {})) {
    const header = follow<HeaderObject>(spec);
    const actual = reply.headers[name.toLowerCase()];
    if (actual === undefined) {
      assert.ok(header.required !== true, `${what}: required header ${name} is missing`);
      continue;
    }
    assert.ok('$ref' in spec, `${what}: header ${name} is a components/headers reference`);
    validate(`${spec.$ref}/schema`, actual, `${what}: header ${name}`);
  }
  const content = Object.entries(response.content ?? {});
  if (reply.status === 201) assert.ok(reply.headers.location !== undefined, `${what}: Location`);
  if (method === 'head' || content.length === 0) {
    assert.equal(reply.body, '', `${what}: no body`);
    return;
  }
  const [mediaType, media] = content[0] ?? ['', { schema: { $ref: '' } }];
  assert.equal(reply.headers['content-type'], mediaType, what);
  validate(media.schema.$ref, JSON.parse(reply.body), `${what}: body`);
}
