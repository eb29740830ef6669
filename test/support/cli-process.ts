/**
 * The project's CLI as a child process on the pinned Node, its stdout read line by line, so a
 * test can wait for a log line (a URL, a "listening") before it speaks HTTP to it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export const NODE = 'node_modules/.bin/node';

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The first stdout line that matches, once it is written. */
  readonly line: (match: (line: string) => boolean) => Promise<string>;
  /** Every stdout line so far. */
  readonly seen: readonly string[];
}

export function run(args: readonly string[], env: Record<string, string>): CliProcess {
  const child = spawn(NODE, ['bin/catalog-gateway.js', ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const seen: string[] = [];
  // Kept for the message of a process that exits before the line a test waits for.
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const wanted: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  lines.on('line', (line) => {
    seen.push(line);
    for (const w of wanted.filter((x) => x.match(line))) {
      wanted.splice(wanted.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const line = (match: (line: string) => boolean): Promise<string> => {
    const found = seen.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      wanted.push({ match, resolve });
      child.once('exit', (code) => {
        reject(new Error(`exited with ${String(code)} before the line appeared; stdout:\n${seen.join('\n')}\nstderr:\n${stderr}`));
      });
    });
  };
  return { child, line, seen };
}
