/**
 * nginx `proxy_cache` (Debian's package) as a peer in the bench: started in the foreground with
 * bench/nginx.conf, as one process, so its CPU can be pinned and counted like a Node server's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort } from '../src/cli/free-port.ts';

export interface NginxProcess {
  readonly url: string;
  readonly pid: number;
  readonly accessLog: string;
  stop(): Promise<void>;
}

async function answering(url: string, child: ChildProcess, errorLog: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${readFileSync(errorLog, 'utf8')}`);
    try {
      const { body } = await request(url, { method: 'HEAD' });
      await body.dump();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nginx did not answer at ${url}`);
}

/** `workers`: 1 runs nginx as a single process; more run a master and that many worker processes. */
export async function startNginx(dir: string, originUrl: string, workers = 1): Promise<NginxProcess> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  const template = readFileSync(new URL('nginx.conf', import.meta.url), 'utf8');
  writeFileSync(conf, template.replaceAll('@DIR@', dir).replaceAll('@PORT@', String(port)).replaceAll('@ORIGIN@', new URL(originUrl).host).replaceAll('@WORKERS@', String(workers)).replaceAll('@MASTER@', workers > 1 ? 'on' : 'off'));
  const child = spawn('nginx', ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await answering(url, child, join(dir, 'error.log'));
  return {
    url,
    pid: child.pid ?? 0,
    accessLog: join(dir, 'access.log'),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGQUIT');
      }),
  };
}
