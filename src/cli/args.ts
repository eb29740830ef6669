import { parseArgs } from 'node:util';
import type { Command, FlagSpec, ParsedArgs } from './command.ts';

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Every command takes it, so that all of them can be pointed at the same state. */
const DATA_DIR_FLAG: FlagSpec = {
  name: 'data-dir',
  key: 'dataDir',
  value: 'DIR',
  description: "signing secret, catalog and event registration (default: the package's data/)",
};

const COMMON_FLAGS: readonly FlagSpec[] = [
  DATA_DIR_FLAG,
  { name: 'config', value: 'FILE', description: 'JSONC file layered over config/default.jsonc' },
  { name: 'help', boolean: true, description: 'show this help' },
];

/** node:util's strict parser, its refusals turned into UsageErrors (a message and exit code 2). */
export function parseFlags(
  argv: readonly string[],
  options: Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>,
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function helpText(command: Command): string {
  const common = COMMON_FLAGS.map((f) => (f === DATA_DIR_FLAG && command.dataDir !== undefined ? { ...f, description: command.dataDir } : f));
  const flags = [...command.flags, ...common];
  const left = (f: FlagSpec): string => `--${f.name}${f.value === undefined ? '' : ` ${f.value}`}`;
  const width = Math.max(...flags.map((f) => left(f).length)) + 2;
  const lines = flags.map((f) => {
    const bound = f.key === undefined ? '' : ` (config ${f.key})`;
    return `  ${left(f).padEnd(width)}${f.description}${bound}`;
  });
  return `Usage: catalog-gateway ${command.name} [flags]\n\n${command.summary}\n\nFlags:\n${lines.join('\n')}\n`;
}

export function parseCommandArgs(command: Command, argv: readonly string[]): ParsedArgs | 'help' {
  const flags = [...command.flags, DATA_DIR_FLAG];
  const options: Record<string, { type: 'string' | 'boolean' }> = { config: { type: 'string' }, help: { type: 'boolean' } };
  for (const flag of flags) options[flag.name] = { type: flag.boolean === true ? 'boolean' : 'string' };
  const values = parseFlags(argv, options);
  if (values.help === true) return 'help';
  const configFlags = [];
  const own: Record<string, string | boolean | undefined> = {};
  for (const flag of flags) {
    const value = values[flag.name];
    if (value === undefined) continue;
    if (flag.key !== undefined) configFlags.push({ key: flag.key, flag: `--${flag.name}`, value: String(value) });
    else own[flag.name] = value;
  }
  const file = values.config;
  return { config: typeof file === 'string' ? { file, flags: configFlags } : { flags: configFlags }, options: own };
}
