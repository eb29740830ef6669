/**
 * pino loggers for both servers. The destination is injectable so tests read real log lines from
 * a stream; redaction is a second line of defence behind the rule that code never logs a token.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/schema.ts';

export type { Logger } from 'pino';

// Exact paths only: a wildcard path would double the cost of every access-log line, and the
// access record has no field that could hold a token anyway.
const REDACT = ['authorization', 'headers.authorization', 'req.headers.authorization', 'token'];

export function createLogger(config: Config, name: string, destination?: DestinationStream): Logger {
  const configured = config['log.destination'];
  const dest = destination ?? pino.destination(configured === 'stdout' ? 1 : { dest: configured, append: true, mkdir: true });
  return pino(
    {
      name,
      level: config['log.level'],
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    dest,
  );
}
