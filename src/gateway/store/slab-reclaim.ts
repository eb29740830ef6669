/**
 * Asks V8 for a full collection once the memory tier has let go of enough slabs. A slab's memory
 * is freed only when V8 collects the ArrayBuffer that holds it, and V8 counts those as external
 * memory that triggers a collection only after 64 MiB more of it: the small JavaScript objects of
 * the slabs a cache lets go of never grow the heap enough to bring one sooner. Dead slabs so
 * pile up to 64 MiB beyond the live ones, and malloc, which reuses their space for the next
 * slabs, keeps that peak resident for good: with 50 MiB of slabs live and churned, RssAnon 234
 * MiB without the request, 77 MiB with one after every 8 MiB let go of (`node --expose-gc`, a
 * loop that yields between batches).
 *
 * The collection is asynchronous (V8 runs it as a task of its own, not inside the store that
 * asked), and `gc` exists only where Node runs with `--expose-gc`, as every gateway process does
 * (src/loadtest/server-process.ts, GATEWAY_NODE_FLAGS). Without it, slabs wait for V8's own
 * collections, as any ArrayBuffer does.
 */

/** Bytes of slabs let go of between two requests: the dead slabs' share of RSS stays about this. */
export const RECLAIM_EVERY = 8 * 1024 * 1024;

/** Asks for a full collection when the process allows one. */
export function reclaimSlabs(): void {
  void globalThis.gc?.({ type: 'major', execution: 'async' });
}
