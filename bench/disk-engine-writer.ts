/**
 * The writer thread of the `sqlite-worker` engines (disk-engine-stores.ts): one connection, the
 * requests in order; with `fold`, the writes waiting when it gets to them go in one transaction.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine, type Removed, type WriteEntry, type WriterData, type WriterReply, type WriterRequest } from './disk-engine-stores.ts';

const { dir, fold } = workerData as WriterData;
const engine = new SqliteEngine(dir);
let waiting: WriterRequest[] = [];

function answer(ids: readonly number[], work: () => Removed | undefined): void {
  let reply: Omit<WriterReply, 'id'>;
  try {
    const removed = work();
    reply = removed === undefined ? {} : { removed };
  } catch (err) {
    reply = { error: String(err) };
  }
  for (const id of ids) parentPort?.postMessage({ id, ...reply } satisfies WriterReply);
}

/** Serves what has arrived since the last turn: a run of writes as one transaction, the rest one by one. */
function drain(): void {
  const requests = waiting;
  waiting = [];
  for (let i = 0; i < requests.length;) {
    const request = requests[i] as WriterRequest;
    if (request.op === 'write') {
      const run: WriterRequest[] = [];
      for (; i < requests.length && requests[i]?.op === 'write'; i += 1) run.push(requests[i] as WriterRequest);
      const batch: WriteEntry[] = run.flatMap((r) => (r.op === 'write' ? r.batch : []));
      answer(
        run.map((r) => r.id),
        () => {
          engine.write(batch);
          return undefined;
        },
      );
      continue;
    }
    i += 1;
    answer([request.id], () => (request.op === 'purgeTag' ? engine.purgeTag(request.tag) : engine.evictOldest(request.count)));
  }
}

parentPort?.on('message', (request: WriterRequest) => {
  waiting.push(request);
  if (!fold) drain();
  else if (waiting.length === 1) setImmediate(drain);
});
