/**
 * Where a `--cpu-prof` profile spent its time: self time per function and per file or package
 * (V8's sampling profiler format: nodes with call frames, plus per-sample node ids and time
 * deltas), largest first, as shares of the time the process was busy — idle time is left out,
 * since a server under a load generator on a shared machine also waits. Enough to name the
 * functions and modules to look at without opening DevTools.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface HotSpot {
  readonly name: string;
  /** File and line (functions) or file or package (modules), after node_modules/ or the repository root. */
  readonly where: string;
  readonly selfMs: number;
  /** Share of the busy (non-idle) time. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly busyMs: number;
  readonly idleMs: number;
  readonly functions: readonly HotSpot[];
  readonly modules: readonly HotSpot[];
}

function shorten(url: string, root: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  return url.replace(`file://${root}/`, '');
}

/** `pino/lib/tools.js` → `pino`; `src/gateway/pipeline.ts` stays; natives and Node internals by name. */
function moduleOf(where: string, url: string): string {
  if (url === '') return '(native: syscalls, GC, V8)';
  if (url.startsWith('node:')) return `${url.split('/')[0] ?? url} (Node core)`;
  if (url.includes('node_modules/')) return where.startsWith('@') ? where.split('/').slice(0, 2).join('/') : (where.split('/')[0] ?? where);
  return where;
}

function top(map: ReadonlyMap<string, { name: string; where: string; us: number }>, busyUs: number, count: number): HotSpot[] {
  return [...map.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, count)
    .map((e) => ({ name: e.name, where: e.where, selfMs: e.us / 1000, share: busyUs === 0 ? 0 : e.us / busyUs }));
}

export function summariseProfile(profilePath: string, root: string, count = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const modules = new Map<string, { name: string; where: string; us: number }>();
  let busyUs = 0;
  let idleUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (node === undefined) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idleUs += delta;
      return;
    }
    busyUs += delta;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const file = url === '' ? '' : shorten(url, root);
    const where = file === '' ? '' : `${file}:${lineNumber + 1}`;
    const fn = functions.get(`${name} ${where}`) ?? { name, where, us: 0 };
    fn.us += delta;
    functions.set(`${name} ${where}`, fn);
    const mod = moduleOf(file, url);
    const m = modules.get(mod) ?? { name: mod, where: mod, us: 0 };
    m.us += delta;
    modules.set(mod, m);
  });
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, functions: top(functions, busyUs, count), modules: top(modules, busyUs, count) };
}

/** The profile a server wrote last in `dir` (Node names each by time and pid), if any. */
export function newestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}
