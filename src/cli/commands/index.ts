import type { Command } from '../command.ts';
import { fleet } from './fleet.ts';
import { gateway } from './gateway.ts';
import { origin } from './origin.ts';
import { precompile } from './precompile.ts';
import { reload } from './reload.ts';
import { seed } from './seed.ts';
import { start } from './start.ts';
import { token } from './token.ts';

export const COMMANDS: readonly Command[] = [token, gateway, start, fleet, origin, seed, reload, precompile];
