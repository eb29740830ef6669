/**
 * What every `catalog-gateway <command>` declares: its flags, each either bound to a config key
 * (so flags, env and the config file are one layered source) or local to the command.
 */
import type { ConfigKey } from '../config/schema.ts';
import type { LoadOptions } from '../config/load.ts';

/** What a command cannot do in the state it finds (no gateway to reload, a catalog in use): one line, exit 1. */
export class CommandRefusal extends Error {
  override name = 'CommandRefusal';
}

export type ListenerKey = 'gateway.port' | 'gateway.adminPort' | 'origin.port' | 'origin.adminPort';

export interface FlagSpec {
  readonly name: string;
  /** Bound flags override this config key; unbound ones are the command's own options. */
  readonly key?: ConfigKey;
  readonly boolean?: boolean;
  readonly value?: string;
  readonly description: string;
}

export interface ParsedArgs {
  /** `--config FILE` and the flags bound to config keys, ready for `loadConfig`. */
  readonly config: Pick<LoadOptions, 'file' | 'flags'>;
  /** The command's own flags. */
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly FlagSpec[];
  /** What `--data-dir` means to it, when not the shared data directory. */
  readonly dataDir?: string;
  /** The port keys of the listeners it opens, to say which one could not listen. */
  readonly listeners?: readonly ListenerKey[];
  run(args: ParsedArgs): Promise<void>;
}
