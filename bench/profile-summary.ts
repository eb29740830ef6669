/**
 * Where a `--cpu-prof` profile spent its time: self time per function (V8's sampling profiler
 * format: nodes with call frames and hit counts, plus per-sample time deltas), largest first.
 * Enough to name the functions to look at without opening DevTools.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface HotFunction {
  readonly name: string;
  /** File and line, shortened to the part after node_modules/ or the repository root. */
  readonly where: string;
  readonly selfMs: number;
  readonly share: number;
}

function shorten(url: string, root: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  return url.replace(`file://${root}/`, '').replace(/^node:/, 'node:');
}

export function hotFunctions(profilePath: string, root: string, top = 15): HotFunction[] {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (node === undefined) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const where = url === '' ? '' : `${shorten(url, root)}:${lineNumber + 1}`;
    const key = `${name} ${where}`;
    const entry = selfUs.get(key) ?? { name, where, us: 0 };
    entry.us += delta;
    selfUs.set(key, entry);
    total += delta;
  });
  return [...selfUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((e) => ({ name: e.name, where: e.where, selfMs: e.us / 1000, share: total === 0 ? 0 : e.us / total }));
}
