/**
 * Every use of node:http's private fields, in one file. Each saves work the public API cannot
 * (docs/performance.md) or learns what it does not say; none is needed for a correct answer.
 * Each field is looked for once, at start-up, on a request and a response node:http makes for a
 * socket that never connects; one that is missing (a Node that renamed it) is replaced by the
 * public API, and `reportNodeHttpInternals` logs which. `GATEWAY_NODE_HTTP=public` in the
 * environment forces every replacement, so that the suites can be run as such a Node would run
 * them (test/gateway/node-http-internals.test.ts).
 *
 *   field                        used for                           without it
 *   request `_readableState`     a GET's 'readable' event forgone   node:http schedules it
 *   request `_dumped`            a GET's drain forgone              node:http drains the stream
 *   response `_storeHeader`,     a stored head's text sent as it    `writeHead` with a field list
 *     `_expect_continue`,        is, with what `writeHead` adds
 *     `_sent100`
 *   socket `_httpMessage`        the answer in flight on an         the server's own record of
 *                                HTTP/1.1 connection                its unfinished answers
 *   socket `_handle.             bytes an HTTP/2 session wrote      the stream deadlines and the
 *     writeQueueSize`            that the kernel has not taken      idle timeout alone bound a
 *                                (a stalled reader's budget)        stalled reader
 *   TLS socket `_parent`         the TCP socket under a TLS one     plain HTTP sent to the TLS
 *                                whose handshake failed, to answer  port is closed without the
 *                                plain HTTP in cleartext            400 that says to use https
 *   HTTP/2 session's state       its streams kept in slots, not in  Node's Map and Set: nearly
 *     (`kState`) `streams`,      a Map and a Set (slot-table.ts)    every stream reaches the old
 *     `pendingStreams`                                              generation
 *   a `process.nextTick` object  kept alive, so that a full         after a few full collections
 *     (async_hooks 'TickObject') collection never finds none and    every tick object is made in
 *                                drops the maps of its literal      V8's runtime, for good
 *
 * The HTTP/2 session's field is looked for on a session made over a socket that never connects.
 */
import { createHook } from 'node:async_hooks';
import type { EventEmitter } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { performServerHandshake, type ServerHttp2Session } from 'node:http2';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Logger } from './logger.ts';
import { SlotTable } from './slot-table.ts';

interface PrivateRequest {
  /** The stream's record of a 'readable' event already scheduled or emitted; set, none is scheduled. */
  readonly _readableState?: { emittedReadable?: boolean };
  /** The field the request's `_dump` checks first: set, the call returns at once. */
  _dumped?: boolean;
}

/**
 * The parts of node:http's response that its own `writeHead` uses: `_storeHeader` makes the head
 * from a status line and a field list, adding what the connection needs (`Connection`,
 * `Keep-Alive`, the framing, a `Date` when asked); the other two say whether a client that was to
 * wait for 100 Continue got it.
 */
interface PrivateResponse {
  _storeHeader?(firstLine: string, fields: readonly string[]): void;
  readonly _expect_continue?: boolean;
  readonly _sent100?: boolean;
}

/** Node keeps the answer being written on a connection as its socket's `_httpMessage`. */
interface PrivateSocket {
  readonly _httpMessage?: ServerResponse | null;
}

/** Which of the private fields this process uses. */
export interface NodeHttpInternals {
  readonly endSignal: boolean;
  readonly drain: boolean;
  readonly headText: boolean;
  readonly inFlight: boolean;
  readonly streamTable: boolean;
  readonly tickObject: boolean;
}

/**
 * The parts of an HTTP/2 session's private state (under a symbol named `state`) that hold its
 * streams: `streams`, the open ones by id, a Map that Node reads with `get`, `set`, `delete`, `size`
 * and `forEach`; `pendingStreams`, a Set that each new stream enters and, on the server, leaves in
 * its constructor, read with `add`, `delete`, `size` and `forEach`.
 */
interface SessionStreams {
  streams?: unknown;
  pendingStreams?: unknown;
}

/** Whether `value` is an empty Map (`kind` 'Map') or Set ('Set') of the session's own realm. */
function isEmpty(value: unknown, kind: 'Map' | 'Set'): boolean {
  return Object.prototype.toString.call(value) === `[object ${kind}]` && (value as { size?: unknown }).size === 0;
}

function holdsStreams(state: SessionStreams | undefined): state is SessionStreams {
  return state !== undefined && isEmpty(state.streams, 'Map') && isEmpty(state.pendingStreams, 'Set');
}

/** The symbol of an HTTP/2 session's private state, where that state holds its streams in a Map and a Set. */
function sessionStateSymbol(): symbol | undefined {
  const socket = new Socket();
  const session = performServerHandshake(socket);
  try {
    const symbol = Object.getOwnPropertySymbols(session).find((s) => s.description === 'state');
    if (symbol === undefined) return undefined;
    return holdsStreams((session as unknown as Record<symbol, SessionStreams | undefined>)[symbol]) ? symbol : undefined;
  } finally {
    session.destroy();
    socket.destroy();
  }
}

/**
 * One of the objects `process.nextTick` queues, held for the process's life. Node makes each as a
 * literal with symbol keys, and each lives for a turn: a full collection that finds none alive
 * drops the maps the literal's site learnt, the site meets new ones after it, and after a few such
 * collections it stops caching them. From then on every tick object is made in V8's runtime:
 * 430 ns a tick instead of 95 on this machine, for the process's life, at two ticks a request
 * (docs/performance.md, "A tick object kept"). One held keeps its maps, and the site's cache, alive.
 * It is the async_hooks resource of a tick, caught by a hook enabled for that one tick.
 */
function holdTickObject(): object | undefined {
  let held: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') held ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => undefined);
  hook.disable();
  return held;
}

function probe(): NodeHttpInternals {
  const socket = new Socket();
  const req = new IncomingMessage(socket) as IncomingMessage & PrivateRequest;
  const res = new ServerResponse(req) as ServerResponse & PrivateResponse;
  res.assignSocket(socket);
  const inFlight = (socket as Socket & PrivateSocket)._httpMessage === res;
  res.detachSocket(socket);
  socket.destroy();
  return {
    endSignal: typeof req._readableState?.emittedReadable === 'boolean',
    drain: typeof req._dumped === 'boolean',
    headText: typeof res._storeHeader === 'function' && typeof res._expect_continue === 'boolean' && typeof res._sent100 === 'boolean',
    inFlight,
    streamTable: sessionState !== undefined,
    tickObject: heldTickObject !== undefined,
  };
}

const NONE: NodeHttpInternals = { endSignal: false, drain: false, headText: false, inFlight: false, streamTable: false, tickObject: false };

const forcePublic = process.env.GATEWAY_NODE_HTTP === 'public';
const sessionState = forcePublic ? undefined : sessionStateSymbol();
/** Exported for the test that checks what it keeps. */
export const heldTickObject = forcePublic ? undefined : holdTickObject();

export const internals: NodeHttpInternals = forcePublic ? NONE : probe();

/** One warning per field missing, once a logger exists. */
export function reportNodeHttpInternals(logger: Logger): void {
  for (const [use, present] of Object.entries(internals)) {
    if (!present) logger.warn({ use }, 'a node:http private field is missing here (or GATEWAY_NODE_HTTP=public): its public replacement is used');
  }
}

/** Marks `req`'s 'readable' event as emitted, so that its parser's end schedules none. */
export function forgoReadable(req: IncomingMessage): void {
  const state = (req as IncomingMessage & PrivateRequest)._readableState;
  if (internals.endSignal && state !== undefined) state.emittedReadable = true;
}

/** Marks `req` as drained, so that node:http does not resume its stream after the answer. */
export function markDrained(req: IncomingMessage): void {
  if (internals.drain) (req as IncomingMessage & PrivateRequest)._dumped = true;
}

/**
 * Hands node:http the head of `res` as `firstLine` (status line and fields, CRLF-ended) and the
 * field list `fields` it adds to, as `writeHead` does after checking each field; only when
 * `internals.headText`. As `writeHead` does, a client that was to wait for 100 Continue and got
 * an answer instead may send its body next, so the connection then closes after it.
 */
export function storeHead(res: ServerResponse, firstLine: string, fields: readonly string[]): void {
  const http1 = res as ServerResponse & PrivateResponse;
  if (http1._expect_continue === true && http1._sent100 !== true) res.shouldKeepAlive = false;
  http1._storeHeader?.(firstLine, fields);
}

/**
 * A reader of the answer in flight on an HTTP/1.1 connection of `server`: the one being written,
 * or, between two, the next one queued for the requests pipelined behind it (RFC 9112 §9.3.2).
 */
export function answersInFlight(server: EventEmitter): (socket: Duplex) => ServerResponse | null | undefined {
  if (internals.inFlight) return (socket) => (socket as Duplex & PrivateSocket)._httpMessage;
  // node:http answers a connection's requests in the order they came: the first unfinished is in flight.
  const unfinished = new WeakMap<Duplex, ServerResponse[]>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    let answers = unfinished.get(socket);
    if (answers === undefined) unfinished.set(socket, (answers = []));
    const queued = answers;
    queued.push(res);
    const done = (): void => {
      const at = queued.indexOf(res);
      if (at !== -1) queued.splice(at, 1);
    };
    res.once('finish', done);
    res.once('close', done);
  });
  return (socket) => unfinished.get(socket)?.[0];
}

/**
 * Bytes a socket's handle holds that the kernel has not taken. Node's HTTP/2 session writes to the
 * handle itself, which the socket's `writableLength` never sees: libuv's `writeQueueSize` does.
 * Where it is missing (or the public API is forced), 0: the caller's deadlines still hold.
 */
export function unwrittenBytes(socket: Duplex): number {
  if (internals === NONE) return 0;
  return (socket as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
}

/**
 * The TCP socket a server-side TLS socket was made over, which node:tls keeps as `_parent` and
 * names nowhere public; undefined where it is missing (or the public API is forced).
 */
export function tcpSocketUnder(tls: TLSSocket): Socket | undefined {
  if (internals === NONE) return undefined;
  const parent = (tls as TLSSocket & { _parent?: unknown })._parent;
  return parent instanceof Socket ? parent : undefined;
}

/**
 * Keeps `session`'s streams in SlotTables instead of Node's Map and Set: the Map's given-up hash
 * tables kept streams reachable for the young collector long after they closed, and the Set, which
 * every stream enters and leaves at once, gave up a table in the old generation every few streams
 * (slot-table.ts). Called as the session starts, before its first stream; where the fields are
 * missing, Node's own stay.
 */
export function keepStreamsInSlots(session: ServerHttp2Session): void {
  if (sessionState === undefined) return;
  const state = (session as unknown as Record<symbol, SessionStreams | undefined>)[sessionState];
  if (!holdsStreams(state)) return;
  state.streams = new SlotTable<number, unknown>();
  state.pendingStreams = new SlotTable<unknown, unknown>();
}
