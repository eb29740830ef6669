#!/usr/bin/env node
// The CLI's entry, and a launcher: whichever Node runs it, from whatever directory, the commands
// run on the project's Node 24 (the dev dependency `node`, node_modules/.bin/node beside this
// file's real path) with the gateway's V8 flags and malloc's arena limit, which Node 24's built-in type stripping lets run
// the TypeScript sources as they are (tsconfig keeps them to erasable syntax), with no loader on
// the request path. The shebang names no flags: `env -S` is not everywhere, and a system Node
// older than the flags would stop at them (`bad option: --no-memory-reducer-favors-memory`)
// before reaching the one line below that says what is needed.
//
// Node 24 started without the flags or the limit (`npx catalog-gateway`, the shebang) replaces
// itself with the same Node, the flags and the limit (process.execve: the same pid, so signals and
// pid files stay right). An older Node starts the project's Node as a child and passes signals on
// to it, since it has no execve; the pid that `listening` and gateway.pid name is the child's.
// `npm start`, the systemd unit and the image give the flags and the limit themselves.
//
// The flags are GATEWAY_NODE_FLAGS (src/loadtest/server-process.ts, which says why each is
// there; test/ops/node-flags.test.ts keeps the copies one list). package.json has no `engines`:
// npm runs on the system's Node and would warn EBADENGINE on every install about a project that
// brings its own Node 24.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const REQUIRED_MAJOR = 24;
const NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=10', '--no-allocation-site-pretenuring', '--no-memory-reducer-favors-memory'];

// glibc's malloc gives each thread that allocates an arena of its own, up to eight per core, and
// an arena keeps what was freed in it. V8's collector threads allocate their marking worklists
// and evacuation buffers there, a little in each arena as the work moves between threads: 40–45
// MiB held by four arenas in a churning 64 MiB cache, against 27 MiB when the threads share one,
// at no cost to hits (docs/performance.md, "Two malloc arenas"). An environment that sets it
// keeps its own.
const MALLOC_ENV = { MALLOC_ARENA_MAX: '2' };

const major = Number(process.versions.node.split('.')[0]);
const flagged = NODE_FLAGS.every((flag) => process.execArgv.includes(flag)) && Object.keys(MALLOC_ENV).every((name) => process.env[name] !== undefined);
const env = { ...MALLOC_ENV, ...process.env };

if (major >= REQUIRED_MAJOR && flagged) {
  // Node keeps the type-stripped and compiled form of every module in its compile cache (keyed
  // by the source's hash, so an edit is never served stale). A start that finds all of them there
  // never loads the TypeScript stripper, a WebAssembly module whose memory stays for the life of
  // the process: about 25 MiB less per process. The cache lives in NODE_COMPILE_CACHE or the
  // system's temporary folder; where it cannot be written, Node carries on without it.
  const { enableCompileCache } = await import('node:module');
  enableCompileCache();
  await import('../src/cli/main.ts');
} else {
  const self = realpathSync(fileURLToPath(import.meta.url));
  const projectNode = join(dirname(self), '..', 'node_modules', '.bin', 'node');
  const node = major >= REQUIRED_MAJOR ? process.execPath : existsSync(projectNode) ? projectNode : undefined;
  if (node === undefined) {
    process.stderr.write(
      `catalog-gateway needs Node.js ${REQUIRED_MAJOR} or later; this is ${process.version}. Install Node.js ${REQUIRED_MAJOR}, or run it through npm scripts after a full \`npm ci\`, which brings a Node ${REQUIRED_MAJOR} of its own.\n`,
    );
    process.exit(1);
  }
  const args = [...NODE_FLAGS, ...process.execArgv.filter((arg) => !NODE_FLAGS.includes(arg)), self, ...process.argv.slice(2)];
  if (typeof process.execve === 'function') {
    process.execve(node, [node, ...args], env);
  } else {
    const child = spawn(node, args, { stdio: 'inherit', env });
    // Ctrl-C signals the terminal's whole foreground group, the child too: passed on as well, it
    // would reach the child twice, and a second SIGINT stops a server at once, without a drain.
    process.on('SIGINT', () => undefined);
    for (const signal of ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2']) {
      process.on(signal, () => {
        child.kill(signal);
      });
    }
    child.on('exit', (code, signal) => {
      if (signal === null) process.exit(code ?? 1);
      // Ended by a signal: so is this process, for whoever waits on it.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    });
  }
}
