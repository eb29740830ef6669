/**
 * A server under test in a child process of its own, so the load generator and the server never
 * share an event loop (or a core's worth of garbage collection). The child's stdout goes straight
 * to a file, not through a pipe to this process, so even a busy access log costs the load
 * generator nothing; the "listening" line (see the server start contract) is read from that file.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, watch } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/catalog-gateway.js', import.meta.url));

/**
 * V8 flags a gateway process runs with; `npm start` and the bin's launcher pass the same (a test
 * keeps them in step). Without pointer compression (Node's default build) V8 lets each of the
 * young generation's two semi-spaces grow to 64 MiB under a high allocation rate, and a gateway
 * filling its cache allocates at one: 128 MiB of RSS that is neither cache nor live data. 8 MiB
 * semi-spaces still leave thousands of requests between scavenges. `--heap-growing-percent=10`
 * lets the old generation grow by a tenth past what survived the last full collection before the
 * next one, instead of V8's factor of up to 4: a cache filling at the rate of misses promotes
 * every entry it later evicts, and with the default the evicted ones piled up as reserved heap
 * (8 MiB bound, 100,000 fills: peak RSS 270 → 166 MiB at 20 %; 256 MiB bound, 250,000 fills:
 * 465 → 439 MiB from 20 % to 10 %; hits measured no slower). `--no-allocation-site-pretenuring`:
 * while a gateway fills, its requests wait on the origin and outlive scavenges, so V8 learns to
 * allocate their objects straight in the old generation, and keeps doing so for hits that live
 * 3 ms: with 20,000 entries filled, 318 MB promoted in 10 s of hits and 36 full collections,
 * against 1.4 MB and none without it; hits 7,500 → 12,000 req/s in an interleaved A/B.
 * `--no-memory-reducer-favors-memory`: when a server goes quiet, V8's memory reducer collects in
 * the mode that shrinks the heap hardest, which lets go of the maps no live object has; the
 * objects `process.nextTick` makes (computed keys, short-lived, so none is alive then) lose their
 * map's transitions, and from then on every tick object is made in V8's runtime: a bare node:http
 * server went from 12.7 to 16.3–17.4 µs of CPU a request for good after its first idle collection,
 * a gateway hit from 21 to 25.5–27 (docs/performance.md, "V8 flags of every gateway process"). Without that
 * mode the reducer still collects when the server is quiet, and no process slowed.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=8',
  '--heap-growing-percent=10',
  '--no-allocation-site-pretenuring',
  '--no-memory-reducer-favors-memory',
];

export interface ServerSpec {
  /** For messages: "origin", "gateway", "bare server". */
  readonly name: string;
  /** Arguments after the Node executable: a script and its flags. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Receives the child's stdout (its log lines); truncated first. */
  readonly logFile: string;
  /** A command the Node executable runs under, such as `ip netns exec NAME` (it must exec, so the pid is Node's). */
  readonly launcher?: readonly string[];
  /** Node flags such as `--cpu-prof`, placed before the script. */
  readonly nodeFlags?: readonly string[];
  readonly cwd?: string;
  /** How long start-up may take; seeding a large catalog on first start counts. Default 180 s. */
  readonly startTimeoutMs?: number;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /** Absent for servers without an admin listener (the bench's bare server). */
  readonly adminUrl: string | undefined;
  readonly logFile: string;
  /** SIGTERM, then the exit code once the process has gone. */
  stop(): Promise<number | null>;
}

export class ServerStartError extends Error {
  override name = 'ServerStartError';
}

interface Listening {
  url: string;
  adminUrl: string | undefined;
}

function findListening(text: string): Listening | undefined {
  for (const line of text.split('\n')) {
    if (!line.includes('"listening"')) continue;
    try {
      const parsed = JSON.parse(line) as { msg?: unknown; url?: unknown; adminUrl?: unknown };
      if (parsed.msg === 'listening' && typeof parsed.url === 'string') {
        return { url: parsed.url, adminUrl: typeof parsed.adminUrl === 'string' ? parsed.adminUrl : undefined };
      }
    } catch {
      // A line cut in half by the read; the watcher sees it again once it is complete.
    }
  }
  return undefined;
}

/** Resolves on exit, or with null when the process could not be spawned at all. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
    child.once('error', () => {
      resolve(null);
    });
  });
}

/** The V8 flag sets whose compile cache this process has filled already. */
const precompiled = new Set<string>();

/**
 * A server measured here should be the one a deployment runs after its first start: the bin's
 * compile cache full, no TypeScript stripper in memory. The cache is keyed by V8 flags, so it is
 * filled once per flag set, before the first start of the CLI with those flags.
 */
function precompileFor(spec: ServerSpec): void {
  const flags = spec.nodeFlags ?? [];
  const id = flags.join(' ');
  if (spec.args[0] !== CLI || precompiled.has(id)) return;
  execFileSync(process.execPath, [...flags, CLI, 'precompile'], { env: spec.env, stdio: 'ignore' });
  precompiled.add(id);
}

export async function startServerProcess(spec: ServerSpec): Promise<ServerProcess> {
  precompileFor(spec);
  const fd = openSync(spec.logFile, 'w');
  let child: ChildProcess;
  try {
    const command = spec.launcher?.[0] ?? process.execPath;
    const prefix = spec.launcher === undefined ? [] : [...spec.launcher.slice(1), process.execPath];
    child = spawn(command, [...prefix, ...(spec.nodeFlags ?? []), ...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', fd, 'pipe'],
    });
  } finally {
    closeSync(fd);
  }
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exit = exited(child);
  const describeFailure = (what: string): string => {
    const output = `${readFileSync(spec.logFile, 'utf8')}\n${stderr}`.trim().split('\n');
    // An uncaught error's own line says more than the stack frames that follow it.
    const error = output.find((line) => /^\w*(Error|Exception)\b.*: /.test(line));
    const shown = error ?? output.slice(-8).join('\n');
    return `${spec.name} ${what}${shown === '' ? '' : `: ${shown}`}`;
  };
  const listening = await new Promise<Listening>((resolve, reject) => {
    const watcher = watch(spec.logFile);
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGKILL');
      reject(new ServerStartError(describeFailure(`did not report "listening" within ${spec.startTimeoutMs ?? 180_000} ms`)));
    }, spec.startTimeoutMs ?? 180_000);
    let settled = false;
    const finish = (): void => {
      settled = true;
      clearTimeout(timer);
      watcher.close();
    };
    const check = (): void => {
      if (settled) return;
      const found = findListening(readFileSync(spec.logFile, 'utf8'));
      if (found === undefined) return;
      finish();
      resolve(found);
    };
    watcher.on('change', check);
    watcher.on('error', (err) => {
      finish();
      reject(err);
    });
    void exit.then((code) => {
      // Long after start, the log may be gigabytes of access lines: nothing to read then.
      if (settled) return;
      finish();
      const found = findListening(readFileSync(spec.logFile, 'utf8'));
      if (found === undefined) reject(new ServerStartError(describeFailure(`exited with code ${code} before listening`)));
      else resolve(found);
    });
    check();
  });
  const pid = child.pid;
  if (pid === undefined) throw new ServerStartError(`${spec.name} did not start`);
  return {
    name: spec.name,
    pid,
    ...listening,
    logFile: spec.logFile,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exit;
    },
  };
}

/** This process's environment without any CATALOG_* variable, for servers whose config the caller sets in full. */
export function cleanEnv(overrides: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('CATALOG_')) env[key] = value;
  return { ...env, ...overrides };
}
