#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=10 --no-allocation-site-pretenuring --no-memory-reducer-favors-memory
// npm puts node_modules/.bin first on PATH, so `npx catalog-gateway` runs on the pinned Node 24,
// whose built-in type stripping runs the TypeScript sources as they are (tsconfig keeps them
// to erasable syntax), with no loader on the request path. The V8 flags are GATEWAY_NODE_FLAGS
// (src/loadtest/server-process.ts), which says why.
//
// This file is plain JavaScript so that an older Node gets here: it says in one line what is
// needed instead of failing on the first TypeScript import with a stack trace. That holds for
// `node bin/catalog-gateway.js`; run through the shebang, Node 20 stops before it, at the V8
// flag it does not have (`bad option: --no-memory-reducer-favors-memory`). It is the only
// version check: package.json has no `engines`, because npm runs on the system's Node and would
// warn EBADENGINE on every install about a project that brings its own Node 24.
import process from 'node:process';

const REQUIRED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_MAJOR) {
  process.stderr.write(`catalog-gateway needs Node.js ${REQUIRED_MAJOR} or later; this is ${process.version}. Install Node.js ${REQUIRED_MAJOR}, or run it through npm scripts after a full \`npm ci\`, which brings a Node ${REQUIRED_MAJOR} of its own.\n`);
  process.exit(1);
}
// Node keeps the type-stripped and compiled form of every module in its compile cache (keyed by
// the source's hash, so an edit is never served stale). A start that finds all of them there
// never loads the TypeScript stripper, a WebAssembly module whose memory stays for the life of
// the process: about 25 MiB less per process. The cache lives in NODE_COMPILE_CACHE or the
// system's temporary folder; where it cannot be written, Node carries on without it.
const { enableCompileCache } = await import('node:module');
enableCompileCache();
await import('../src/cli/main.ts');
