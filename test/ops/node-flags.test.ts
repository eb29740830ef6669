/**
 * Every way the project starts the servers runs Node with GATEWAY_NODE_FLAGS
 * (src/loadtest/server-process.ts says why each is there): `npm start`, `npm run fleet`, the
 * bin's launcher, the systemd unit and the container image. The flags are written out in each,
 * since none of them can read a list from elsewhere (V8's heap flags are not allowed in
 * NODE_OPTIONS), so this test is what keeps them one list. A `precompile` must use them too:
 * Node keys its compile cache by the V8 flags, and a cache filled under other flags is never read
 * (test/shared/compile-cache.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GATEWAY_NODE_FLAGS } from '../../src/loadtest/server-process.ts';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The arguments between a `node` and `bin/catalog-gateway.js` in each place `text` starts the bin. */
function flagsOfStarts(text: string): string[][] {
  return [...text.matchAll(/\bnode((?: +\S+)*?) +bin\/catalog-gateway\.js\b/g)].map((m) =>
    (m[1] ?? '')
      .trim()
      .split(/ +/)
      .filter((a) => a !== ''),
  );
}

test('npm start, npm run fleet, the bin, the systemd unit and the image all run Node with GATEWAY_NODE_FLAGS', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  // The bin's launcher re-runs Node with its NODE_FLAGS when started without them.
  const launcher = JSON.parse((/^const NODE_FLAGS = (\[.*\]);$/m.exec(read('bin/catalog-gateway.js'))?.[1] ?? '[]').replaceAll("'", '"')) as string[];
  // The image's exec-form lines, as the command lines they stand for.
  const image = read('ops/container/Containerfile').replace(/\[((?:"[^"]*",? *)+)\]/g, (_, list: string) => (JSON.parse(`[${list}]`) as string[]).join(' '));
  const places: [string, string, number][] = [
    ['npm start', scripts.start ?? '', 1],
    ['npm run fleet', scripts.fleet ?? '', 1],
    ['the bin', `node ${launcher.join(' ')} bin/catalog-gateway.js`, 1],
    ['the systemd unit', read('ops/systemd/catalog-gateway.service').replaceAll('/opt/catalog-gateway/node_modules/.bin/node', 'node'), 2],
    ['the container image', image, 2],
  ];
  for (const [place, text, starts] of places) {
    const found = flagsOfStarts(text);
    assert.equal(found.length, starts, `${place}: ${starts} start(s) of the bin expected, found ${found.length}`);
    for (const flags of found) assert.deepEqual(flags, GATEWAY_NODE_FLAGS, `${place} runs the bin with other flags`);
  }
});
