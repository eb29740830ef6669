/**
 * pino loggers for both servers. The destination is injectable so tests read real log lines from
 * a stream; redaction is a second line of defence behind the rule that code never logs a token.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { LogSink } from './log-sink.ts';

export type { Logger } from 'pino';

// Exact paths only: a wildcard path would double the cost of every access-log line, and the
// access record has no field that could hold a token anyway.
const REDACT = ['authorization', 'headers.authorization', 'req.headers.authorization', 'token'];

let stampedAt = 0;
let stamp = '';

/**
 * pino's isoTime formats a Date for every line; under load many lines share a millisecond, so
 * the formatted stamp (`,"time":"…"`) is reused until the clock moves on. Access lines, which are
 * written without pino, use it too, so every line of a server carries the same time field.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

export function createLogger(config: Config, name: string, destination?: DestinationStream): Logger {
  const dest = destination ?? new LogSink({ destination: config['log.destination'] });
  return pino(
    {
      level: config['log.level'],
      // Every line names its server, so origin and gateway lines can be told apart when they share
      // a stream (`npm start`) or a log pipeline.
      base: { service: name },
      timestamp: isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    dest,
  );
}

/**
 * Writes a finished line (newline included) to the logger's own destination, in order with its
 * JSON lines, for log formats that are not JSON (`log.format: combined`).
 */
export function lineWriter(logger: Logger): (line: string) => void {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  if (stream === undefined) throw new Error('the logger has no destination stream');
  return (line) => {
    stream.write(line);
  };
}
