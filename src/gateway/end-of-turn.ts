/**
 * Requests served together at the end of the event loop's turn in which they arrived, instead of
 * one by one as Node's HTTP server parses them.
 *
 * In a busy turn Node reads and parses the requests of every ready connection, calling the handler
 * after each. Served there, each request runs the gateway's whole path (edge, route, auth, lookup,
 * deliver, log, metrics) between Node's parsing of one request and of the next and the socket
 * write of each, so that code and its data are fetched back into the processor's caches for every
 * request. Queued and served in a run at the end of the turn (a `setImmediate`, after the poll
 * phase), the same work costs a cache hit about 2–4 µs less CPU (docs/performance.md, "Requests
 * served at the end of the turn"), the lesson the access log's lines taught first (log-sink.ts).
 * The answers' writes, which Node makes in a `nextTick` after each, then go out together too.
 *
 * Nothing is skipped or reordered: requests are served in the order they arrived, each with the
 * time it arrived, so a logged duration counts the wait. The wait is bounded by the turn: what
 * Node parses in one poll phase is served before the loop polls again. The run reads the wall
 * clock once for all of its requests (../shared/turn-clock.ts).
 */
import { performance } from 'node:perf_hooks';
import { withHeldClock } from '../shared/turn-clock.ts';

/**
 * A handler for Node's servers (`req`, `res`) that hands each request to `serve` at the end of the
 * turn it arrived in, with `performance.now()` of its arrival.
 */
export function servedAtEndOfTurn<Req, Res>(serve: (req: Req, res: Res, arrivedAt: number) => void): (req: Req, res: Res) => void {
  let waiting: (Req | Res | number)[] = [];
  const serveWaiting = (): void => {
    // A fresh queue before serving: one that threw part-way must not hold up the next turn's.
    const turn = waiting;
    waiting = [];
    withHeldClock(() => {
      for (let i = 0; i < turn.length; i += 3) serve(turn[i] as Req, turn[i + 1] as Res, turn[i + 2] as number);
    });
  };
  return (req, res) => {
    if (waiting.push(req, res, performance.now()) === 3) setImmediate(serveWaiting);
  };
}
