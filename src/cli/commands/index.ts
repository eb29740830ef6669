import type { Command } from '../command.ts';
import { token } from './token.ts';

export const COMMANDS: readonly Command[] = [token];
