/**
 * nginx `proxy_cache` (Debian's package) as a peer in the bench: started in the foreground with
 * bench/nginx.conf, as one process, so its CPU can be pinned and counted like a Node server's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getGlobalDispatcher, request, type Dispatcher } from 'undici';
import type { CertificateFiles } from '../src/cli/local-certificate.ts';
import { freePort } from '../src/cli/free-port.ts';

export interface NginxProcess {
  readonly url: string;
  readonly pid: number;
  readonly accessLog: string;
  stop(): Promise<void>;
}

async function answering(url: string, child: ChildProcess, errorLog: string, dispatcher: Dispatcher): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${readFileSync(errorLog, 'utf8')}`);
    try {
      const { body } = await request(url, { method: 'HEAD', dispatcher });
      await body.dump();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nginx did not answer at ${url}`);
}

/**
 * `workers`: 1 runs nginx as a single process; more run a master and that many worker processes.
 * `tls`: listen with TLS 1.2+ and HTTP/2 on this certificate; `dispatcher` then trusts it.
 */
export async function startNginx(
  dir: string,
  originUrl: string,
  workers = 1,
  tls?: { readonly files: CertificateFiles; readonly dispatcher: Dispatcher },
): Promise<NginxProcess> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  const template = readFileSync(new URL('nginx.conf', import.meta.url), 'utf8');
  const tlsLines =
    tls === undefined ? '' : `    ssl_certificate ${tls.files.cert};\n    ssl_certificate_key ${tls.files.key};\n    ssl_protocols TLSv1.2 TLSv1.3;`;
  writeFileSync(
    conf,
    template
      .replaceAll('@DIR@', dir)
      .replaceAll('@PORT@', String(port))
      .replaceAll('@LISTEN@', tls === undefined ? '' : ' ssl http2')
      .replaceAll('@TLS@', tlsLines)
      .replaceAll('@ORIGIN@', new URL(originUrl).host)
      .replaceAll('@WORKERS@', String(workers))
      .replaceAll('@MASTER@', workers > 1 ? 'on' : 'off'),
  );
  const child = spawn('nginx', ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  const url = `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`;
  await answering(url, child, join(dir, 'error.log'), tls?.dispatcher ?? getGlobalDispatcher());
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
