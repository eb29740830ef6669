/**
 * Where an HTTP/2 hit's busy time goes, by stage, from a V8 CPU profile (`--cpu-prof`): each
 * sample goes to the first stage, in the order below, that one of the frames on its stack belongs
 * to, so that a stage holds everything it calls (the answer's `respond` and `end` are the answer's,
 * not Node's). Idle samples are left out. Where V8 inlined a function into its caller the
 * caller's frame stands for both, so a stage's edges are approximate to a fraction of a µs. The same stages read the bare node:http2 server's
 * profile (its handler is its answer), so that the two line up stage by stage.
 */
import { readFileSync } from 'node:fs';

interface Frame {
  readonly functionName: string;
  readonly url: string;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: Frame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  /** µs on the monotonic clock (CLOCK_MONOTONIC, as `process.hrtime`), when the first sample's delta starts. */
  readonly startTime: number;
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface Stage {
  readonly name: string;
  readonly holds: (frame: Frame) => boolean;
}

const TEARDOWN =
  /^(onStreamClose|_destroy|emitCloseNT|endReadableNT|afterWrite|afterWriteTick|onWriteComplete|endCheckNT|finishMaybe|closeStream|shutdownWritable|afterShutdown)$/;

export const HTTP2_HIT_STAGES: readonly Stage[] = [
  { name: 'garbage collector', holds: (f) => f.functionName === '(garbage collector)' },
  { name: 'start-up (modules, configuration)', holds: (f) => /^node:internal\/(modules|bootstrap|main)/.test(f.url) || f.functionName === 'loadConfig' },
  { name: 'access log', holds: (f) => /shared\/(access-log|log-sink|logger)\.ts/.test(f.url) },
  { name: 'metrics', holds: (f) => /gateway\/(metrics|request-series)\.ts|prom-client/.test(f.url) },
  // By Node's own two calls as well as by the caller: V8 may inline the caller out of the stack.
  {
    name: 'answer: stream.respond + end',
    holds: (f) =>
      /listeners\/whole-answer\.ts|bare-h2-server\.ts/.test(f.url) ||
      (f.url === 'node:internal/http2/core' && f.functionName === 'respond') ||
      (f.url === 'node:internal/streams/writable' && f.functionName === 'Writable.end'),
  },
  {
    name: 'pipeline: edge, route, auth, lookup',
    holds: (f) => /src\/gateway\/(pipeline|end-of-turn|deliver|target-memo|cache-outcome|steps\/|store\/|routes\/|rules\/)|src\/shared\//.test(f.url),
  },
  { name: 'listener: connection guard, request hand-over', holds: (f) => /src\/gateway\/listeners\//.test(f.url) },
  { name: 'Node: compatibility request and response', holds: (f) => f.url === 'node:internal/http2/compat' },
  { name: 'Node: stream made (HEADERS in)', holds: (f) => f.functionName === 'onSessionHeaders' },
  { name: 'Node: stream teardown, write completion', holds: (f) => TEARDOWN.test(f.functionName) },
  { name: 'TLS, socket, nghttp2 (native)', holds: (f) => f.functionName === '(program)' || /^(onStreamRead|writev|writeBuffer)$/.test(f.functionName) },
];

export interface StageTime {
  readonly name: string;
  readonly busyMs: number;
  readonly share: number;
}

/** Now on the clock a profile's times are on (µs), to pass as `fromUs`. */
export function profileClockUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Busy time per stage of `stages` (and `other` for samples none holds), largest first, of the
 * samples taken from `fromUs` (profileClockUs) on: a server's start and its cache's warming left out.
 */
export function stageBreakdown(profilePath: string, fromUs = 0, stages: readonly Stage[] = HTTP2_HIT_STAGES): { busyMs: number; stages: StageTime[] } {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // A stack's stage, once per profile node rather than once per sample.
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const frames: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node !== undefined) frames.push(node.callFrame);
    }
    const stage = stages.find((s) => frames.some((f) => s.holds(f)))?.name ?? 'other';
    stageOf.set(id, stage);
    return stage;
  };
  const us = new Map<string, number>();
  let busyUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < fromUs || byId.get(id)?.callFrame.functionName === '(idle)') return;
    busyUs += delta;
    const stage = classify(id);
    us.set(stage, (us.get(stage) ?? 0) + delta);
  });
  return {
    busyMs: busyUs / 1000,
    stages: [...us].sort((a, b) => b[1] - a[1]).map(([name, time]) => ({ name, busyMs: time / 1000, share: busyUs === 0 ? 0 : time / busyUs })),
  };
}
