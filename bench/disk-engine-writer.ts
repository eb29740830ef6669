/** The writer thread of the `sqlite-worker` engine (disk-engine-stores.ts): one connection, one request at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine, type WriterReply, type WriterRequest } from './disk-engine-stores.ts';

const engine = new SqliteEngine((workerData as { dir: string }).dir);
parentPort?.on('message', (request: WriterRequest) => {
  let reply: WriterReply;
  try {
    switch (request.op) {
      case 'write':
        engine.write(request.batch);
        reply = { id: request.id };
        break;
      case 'purgeTag':
        reply = { id: request.id, removed: engine.purgeTag(request.tag) };
        break;
      case 'evictOldest':
        reply = { id: request.id, removed: engine.evictOldest(request.count) };
        break;
    }
  } catch (err) {
    reply = { id: request.id, error: String(err) };
  }
  parentPort?.postMessage(reply);
});
