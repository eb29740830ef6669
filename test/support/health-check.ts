/**
 * The health check of the test doubles that stand in for the origin: the gateway fixture probes it,
 * and a double answers it before its script sees the request, so probes never show up in what a
 * test counts or scripts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const HEALTH_PATH = '/__health';

/** True when the request was the health check and has been answered. */
export function answeredHealthCheck(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url !== HEALTH_PATH) return false;
  res.end();
  return true;
}
