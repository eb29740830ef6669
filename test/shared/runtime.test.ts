import assert from 'node:assert/strict';
import { test } from 'node:test';

test('the suite runs on the pinned Node.js 24', () => {
  assert.equal(process.versions.node.split('.')[0], '24');
});
