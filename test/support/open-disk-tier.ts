/** Opens the disk tier in DIR for OWNER at the instant START_AT (ms) and closes it: one of the processes of the concurrent-open test. */
import { openDiskTier } from './disk-tier.ts';

const [dir = '', owner, startAt] = process.argv.slice(2);
// All at one instant, as the workers a primary forks together open it.
await new Promise((resolve) => setTimeout(resolve, Number(startAt) - Date.now()));
openDiskTier(dir, { owner: Number(owner), maxBytes: 1 << 20 }).disk.close();
