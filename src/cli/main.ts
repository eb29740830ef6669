/** `catalog-gateway <command>`: one program for the origin, the gateway and their tools. */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { TlsIdentityError } from '../gateway/listeners/tls-identity.ts';
import { DiskTierInUse } from '../gateway/store/disk/disk-store.ts';
import { UsageError, helpText, parseCommandArgs } from './args.ts';
import { CommandRefusal, type Command } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { cannotListen, refuseSharedPorts } from './listeners.ts';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  const rows = COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n');
  return `Usage: catalog-gateway <command> [flags]\n       catalog-gateway --version\n\nCommands:\n${rows}\n\nRun 'catalog-gateway <command> --help' for a command's flags.\n`;
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
  // Read here too, for the listeners: what they may not share is refused before any of them opens.
  let config: Config | undefined;
  try {
    const args = parseCommandArgs(command, rest);
    if (args === 'help') {
      process.stdout.write(helpText(command));
      return 0;
    }
    if (command.listeners !== undefined) {
      config = loadConfig(args.config);
      refuseSharedPorts(command, config);
    }
    await command.run(args);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`catalog-gateway ${command.name}: ${err.message}\n\n${helpText(command)}`);
      return 2;
    }
    if (err instanceof TlsIdentityError) {
      // The pair named by http.tls.cert and http.tls.key cannot serve: the operator's to fix, like a bad value.
      process.stderr.write(`catalog-gateway ${command.name}: config keys http.tls.*: ${err.message}\n`);
      return 78;
    }
    if (err instanceof CommandRefusal || err instanceof DiskTierInUse) {
      process.stderr.write(`catalog-gateway ${command.name}: ${err.message}\n`);
      return 1;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`catalog-gateway ${command.name}: ${err.message}\n`);
      return 78;
    }
    const listenFailure = cannotListen(err, command, config);
    if (listenFailure !== undefined) {
      process.stderr.write(`catalog-gateway ${command.name}: ${listenFailure}\n`);
      return 1;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
