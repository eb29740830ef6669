/** `catalog-gateway <command>`: one program for the origin, the gateway and their tools. */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config/load.ts';
import { envName, type ConfigKey } from '../config/schema.ts';
import { UsageError, helpText, parseCommandArgs } from './args.ts';
import type { Command, ParsedArgs } from './command.ts';
import { COMMANDS } from './commands/index.ts';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  const rows = COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n');
  return `Usage: catalog-gateway <command> [flags]\n       catalog-gateway --version\n\nCommands:\n${rows}\n\nRun 'catalog-gateway <command> --help' for a command's flags.\n`;
}

const LISTENER_NAMES: Partial<Record<ConfigKey, string>> = {
  'gateway.port': "the gateway's API listener",
  'gateway.adminPort': "the gateway's admin listener",
  'origin.port': "the origin's API listener",
  'origin.adminPort': "the origin's admin listener",
};

/** The listeners of the command configured on `port`, each with the flag (or variable) that sets it. */
function listenersOn(command: Command, args: ParsedArgs, port: unknown): string[] {
  const config = loadConfig(args.config);
  return (command.listeners ?? [])
    .filter((key) => config[key] === port)
    .map((key) => {
      const flag = command.flags.find((f) => f.key === key);
      return `${LISTENER_NAMES[key] ?? key} (${flag === undefined ? envName(key) : `--${flag.name}`})`;
    });
}

/**
 * A port that is taken or not allowed is an operator's everyday mistake: say so in one line,
 * naming the listener; two of the command's own listeners on one port is a clash of two flags.
 */
function cannotListen(err: unknown, command: Command, args: ParsedArgs): string | undefined {
  const { code, address, port } = err as { code?: unknown; address?: unknown; port?: unknown };
  if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') return undefined;
  const where = `${String(address)}:${String(port)}`;
  const listeners = listenersOn(command, args, port);
  if (code === 'EADDRINUSE' && listeners.length > 1) return `${listeners.join(' and ')} are both configured on port ${String(port)}; give them different ports`;
  const reason = code === 'EADDRINUSE' ? 'the address is already in use' : code === 'EACCES' ? 'permission denied' : 'the address is not available here';
  const which = listeners[0] === undefined ? '' : ` for ${listeners[0]}`;
  return `cannot listen on ${where}${which}: ${reason} (choose another with the port flags or CATALOG_*_PORT)`;
}

/** The version in package.json, the one place it is kept. */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`catalog-gateway ${version()} (Node.js ${process.version})\n`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const command: Command | undefined = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    process.stderr.write(`catalog-gateway: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  let args: ParsedArgs | 'help' | undefined;
  try {
    args = parseCommandArgs(command, rest);
    if (args === 'help') {
      process.stdout.write(helpText(command));
      return 0;
    }
    await command.run(args);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`catalog-gateway ${command.name}: ${err.message}\n\n${helpText(command)}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`catalog-gateway ${command.name}: ${err.message}\n`);
      return 78;
    }
    const listenFailure = args === undefined || args === 'help' ? undefined : cannotListen(err, command, args);
    if (listenFailure !== undefined) {
      process.stderr.write(`catalog-gateway ${command.name}: ${listenFailure}\n`);
      return 1;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
