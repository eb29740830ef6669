#!/usr/bin/env node
// npm puts node_modules/.bin first on PATH, so `npx catalog-gateway` runs on the pinned Node 24.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
