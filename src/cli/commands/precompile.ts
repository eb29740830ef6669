import { flushCompileCache, getCompileCacheDir } from 'node:module';
import type { Command } from '../command.ts';

/**
 * Loads every module the program can run, so that Node's compile cache (enabled by the bin)
 * holds all of them and no later start has to load the TypeScript stripper. Node keys the cache
 * by its version and V8 flags: run this with the flags the servers run with (the bin's launcher
 * adds them, and the npm scripts carry them), for example in an image build after the sources are copied.
 */
export const precompile: Command = {
  name: 'precompile',
  summary: "Fill Node's compile cache with every module, so starts skip type stripping (about 25 MiB less per process).",
  flags: [],
  async run() {
    // The CLI has loaded every command's modules already, to find this one; only the fleet's
    // modules wait for a Redis URL (gateway.ts), so they are the ones to load here.
    await import('../../gateway/fleet/fleet.ts');
    flushCompileCache();
    const dir = getCompileCacheDir();
    process.stdout.write(
      dir === undefined ? 'the compile cache is off here (NODE_DISABLE_COMPILE_CACHE, or its folder cannot be written)\n' : `compile cache: ${dir}\n`,
    );
  },
};
