#!/usr/bin/env -S node --max-semi-space-size=8
// npm puts node_modules/.bin first on PATH, so `npx catalog-gateway` runs on the pinned Node 24,
// whose built-in type stripping runs the TypeScript sources as they are (tsconfig keeps them
// to erasable syntax), with no loader on the request path. The V8 flags are GATEWAY_NODE_FLAGS
// (src/loadtest/server-process.ts), which says why.
await import('../src/cli/main.ts');
