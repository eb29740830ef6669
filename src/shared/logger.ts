/**
 * pino loggers for both servers. The destination is injectable so tests read real log lines from
 * a stream; redaction is a second line of defence behind the rule that code never logs a token.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { LogSink, type LineMaker } from './log-sink.ts';

export type { Logger } from 'pino';

// Exact paths only: a wildcard path would double the cost of every access-log line, and the
// access record has no field that could hold a token anyway.
const REDACT = ['authorization', 'headers.authorization', 'req.headers.authorization', 'token'];

/** A time stamp's milliseconds and the end of its field, by their 1,000 values: `007Z"`. */
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z"`);

/**
 * pino's isoTime formats a Date for every line; under load many lines share a millisecond, so
 * each writer of lines (a logger, an access log) reuses its formatted stamp (`,"time":"…"`) until
 * the clock moves on. Access lines, which are written without pino, are stamped the same way.
 * Below a line a millisecond (one client's sequential connections, each its own line) each stamp
 * is a new millisecond: the date and time to the second are formatted once a second, and the
 * milliseconds joined to them from a table, instead of a Date made and formatted for every line.
 */
export class TimeStamp {
  #at = Number.NaN;
  #field = '';
  #second = Number.NaN;
  /** `,"time":"2026-11-29T21:54:29.` for `#second`. */
  #head = '';

  /** The time field of a line about `ms` (since the epoch). */
  field(ms: number): string {
    if (ms !== this.#at) {
      this.#at = ms;
      // A Date drops a fraction toward zero.
      const whole = Math.trunc(ms);
      const second = Math.floor(whole / 1000);
      if (second !== this.#second) {
        this.#second = second;
        // toISOString ends every time with `.sssZ`; what comes before is the second's.
        this.#head = `,"time":"${new Date(second * 1000).toISOString().slice(0, -4)}`;
      }
      this.#field = this.#head + (MILLIS[whole - second * 1000] ?? '000Z"');
    }
    return this.#field;
  }
}

export function createLogger(config: Config, name: string, destination?: DestinationStream): Logger {
  const dest = destination ?? new LogSink({ destination: config['log.destination'] });
  const stamp = new TimeStamp();
  return pino(
    {
      level: config['log.level'],
      // Every line names its server, so origin and gateway lines can be told apart when they share
      // a stream (`npm start`) or a log pipeline.
      base: { service: name },
      timestamp: () => stamp.field(Date.now()),
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    dest,
  );
}

/**
 * Hands a line about `item` to the logger's own destination, to be made by `make` (newline
 * included), in order with its JSON lines. A LogSink makes it later, with others (log-sink.ts,
 * `defer`); another destination (a test's stream) gets it made at once.
 */
export function lineWriter<T>(logger: Logger): (item: T, make: LineMaker<T>) => void {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  if (stream === undefined) throw new Error('the logger has no destination stream');
  if (stream instanceof LogSink)
    return (item, make) => {
      stream.defer(item, make);
    };
  return (item, make) => {
    stream.write(make(item, Date.now()));
  };
}
