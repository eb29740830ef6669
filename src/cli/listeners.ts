/**
 * The listeners a command opens, named as an operator knows them: which server, API or admin,
 * and the flag (or variable) that sets its port. A port two of them share is refused before
 * anything listens; a port that cannot be had says which listener wanted it.
 */
import { ConfigError } from '../config/load.ts';
import { envName, type Config } from '../config/schema.ts';
import type { Command, ListenerKey } from './command.ts';

const NAMES: Readonly<Record<ListenerKey, string>> = {
  'gateway.port': "the gateway's API listener",
  'gateway.adminPort': "the gateway's admin listener",
  'origin.port': "the origin's API listener",
  'origin.adminPort': "the origin's admin listener",
};

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

function label(command: Command, key: ListenerKey): string {
  const flag = command.flags.find((f) => f.key === key);
  return `${NAMES[key]} (${flag === undefined ? envName(key) : `--${flag.name}`})`;
}

function host(config: Config, key: ListenerKey): string {
  return key.startsWith('origin.') ? config['origin.host'] : config['gateway.host'];
}

/** Two listeners of the command on one port of one address: refused, naming both flags. */
export function refuseSharedPorts(command: Command, config: Config): void {
  const keys = command.listeners ?? [];
  for (const [i, a] of keys.entries()) {
    for (const b of keys.slice(i + 1)) {
      const sameAddress = host(config, a) === host(config, b) || WILDCARDS.has(host(config, a)) || WILDCARDS.has(host(config, b));
      if (config[a] === 0 || config[a] !== config[b] || !sameAddress) continue;
      throw new ConfigError(`${label(command, a)} and ${label(command, b)} are both configured on port ${config[a]}; give them a port each`);
    }
  }
}

/** A port that is taken or not allowed is an operator's everyday mistake: one line, naming the listener. */
export function cannotListen(err: unknown, command: Command, config: Config | undefined): string | undefined {
  const { code, address, port } = err as { code?: unknown; address?: unknown; port?: unknown };
  if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') return undefined;
  const key = config === undefined ? undefined : command.listeners?.find((k) => config[k] === port);
  const which = key === undefined ? '' : ` for ${label(command, key)}`;
  const reason = code === 'EADDRINUSE' ? 'the address is already in use' : code === 'EACCES' ? 'permission denied' : 'the address is not available here';
  return `cannot listen on ${String(address)}:${String(port)}${which}: ${reason} (choose another with the port flags or CATALOG_*_PORT)`;
}
