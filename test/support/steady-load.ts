/**
 * Continuous load for tests of what happens while a gateway serves (reloads, rolling restarts):
 * `concurrency` loops, each sending its next request as soon as the last one is answered, over
 * keep-alive connections. undici's Agent does not resend a request whose connection died, so a
 * reset the server causes shows up here as a failure, not as a silent retry.
 */
import { Agent, request } from 'undici';

export interface LoadResult {
  readonly ok: number;
  /** Each failure once: a status other than 200, or the error's code and message. */
  readonly failures: readonly string[];
  /** The most requests in flight at once. */
  readonly peakInFlight: number;
}

export interface SteadyLoad {
  /** Requests answered so far. */
  readonly answered: () => number;
  /** Stops sending, waits for the requests in flight, and says how they all went. */
  stop(): Promise<LoadResult>;
}

/** `path(i)` is the target of the i-th request; only a 200 counts as a success. */
export function steadyLoad(url: string, concurrency: number, path: (i: number) => string, headers: Record<string, string> = {}): SteadyLoad {
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 60_000 });
  let running = true;
  let sent = 0;
  let ok = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  const failures: string[] = [];
  const loop = async (): Promise<void> => {
    while (running) {
      const i = sent++;
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      try {
        const res = await request(`${url}${path(i)}`, { dispatcher: agent, headers });
        await res.body.dump();
        if (res.statusCode === 200) ok++;
        else failures.push(`${path(i)}: status ${res.statusCode}`);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        failures.push(`${path(i)}: ${e.code ?? ''} ${e.message}`);
      } finally {
        inFlight--;
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    answered: () => ok + failures.length,
    async stop() {
      running = false;
      await Promise.all(loops);
      await agent.close();
      return { ok, failures, peakInFlight };
    },
  };
}
