/**
 * The primary's fill locks for its workers (src/gateway/workers/host-locks.ts), spoken to as the
 * workers speak to it over IPC: one holder per key, its waiters told when it lets go or dies, and
 * a lock its holder stops renewing lapses. The workers end to end are in disk-tier.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HostLocks, type LockAnswer, type LockEnd, type LockPeer } from '../../src/gateway/workers/host-locks.ts';

class Worker implements LockPeer {
  readonly heard: (LockAnswer | LockEnd)[] = [];
  connected = true;
  #ids = 0;
  #tokens = 0;

  readonly locks: HostLocks;

  constructor(locks: HostLocks) {
    this.locks = locks;
  }

  send(message: LockAnswer | LockEnd): void {
    this.heard.push(message);
  }

  isConnected(): boolean {
    return this.connected;
  }

  /** Asks as host-fill.ts does; the answer's ms: 0 held, else another's time left. */
  take(key: string): { ms: number; token: number } {
    const token = ++this.#tokens;
    return { ms: this.#ask('take', key, token), token };
  }

  left(key: string): number {
    return this.#ask('left', key, 0);
  }

  let(op: 'renew' | 'release', key: string, token: number): void {
    assert.equal(this.locks.heard(this, { type: 'catalog-gateway:fill-lock-held', op, key, token }), true);
  }

  ends(): LockEnd[] {
    return this.heard.filter((m): m is LockEnd => m.type === 'catalog-gateway:fill-lock-end');
  }

  #ask(op: 'take' | 'left', key: string, token: number): number {
    const id = ++this.#ids;
    assert.equal(this.locks.heard(this, { type: 'catalog-gateway:fill-lock', op, key, token, id }), true);
    const answer = this.heard.at(-1) as LockAnswer;
    assert.equal(answer.id, id);
    return answer.ms;
  }
}

test('one worker holds a key; the others are told its time left, then that it let go; a stale token lets nothing go', (t) => {
  const locks = new HostLocks(1000);
  t.after(() => {
    locks.stop();
  });
  const [a, b] = [new Worker(locks), new Worker(locks)];
  const held = a.take('k');
  assert.equal(held.ms, 0, 'the first taker holds it');
  const taken = b.take('k');
  assert.ok(taken.ms > 0 && taken.ms <= 1000, `the second is told the time left: ${taken.ms}`);
  assert.equal(b.take('other').ms, 0, 'another key is free');
  a.let('release', 'k', held.token + 1);
  assert.ok(b.left('k') > 0, 'a release with another token lets nothing go');
  a.let('release', 'k', held.token);
  assert.deepEqual(b.ends(), [{ type: 'catalog-gateway:fill-lock-end', key: 'k', end: 'filled' }]);
  assert.equal(b.left('k'), 0);
  assert.equal(a.take('k').ms, 0, 'free again');
  assert.equal(locks.heard(a, { type: 'catalog-gateway:purged', id: 1, purged: 0 }), false, 'other messages are not the locks');
});

test('a worker that dies frees its keys at once: its waiters are told the lock lapsed, and one takes it over', (t) => {
  const locks = new HostLocks(60_000);
  t.after(() => {
    locks.stop();
  });
  const [a, b, c] = [new Worker(locks), new Worker(locks), new Worker(locks)];
  a.take('k');
  b.take('k');
  c.take('k');
  locks.gone(a);
  for (const waiter of [b, c]) assert.deepEqual(waiter.ends(), [{ type: 'catalog-gateway:fill-lock-end', key: 'k', end: 'lapsed' }]);
  assert.equal(b.take('k').ms, 0, 'b takes the fill over');
  assert.ok(c.take('k').ms > 0, 'c waits on b');
  assert.equal(locks.size, 1);
});

test('a lock its holder stops renewing lapses after its life; renewed, it lasts', async (t) => {
  const locks = new HostLocks(100);
  t.after(() => {
    locks.stop();
  });
  const [a, b] = [new Worker(locks), new Worker(locks)];
  const renewed = a.take('renewed');
  a.take('abandoned');
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 40));
    a.let('renew', 'renewed', renewed.token);
  }
  assert.ok(b.take('renewed').ms > 0, 'renewed past its first life, still held');
  assert.equal(b.take('abandoned').ms, 0, 'not renewed, it lapsed and b takes it');
});
