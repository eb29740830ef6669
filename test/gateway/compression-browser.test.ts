/**
 * A search opened through the gateway in headless Chromium (Debian's, driven by playwright-core):
 * the browser sends its own Accept-Encoding, and the page must hold the JSON the gateway would
 * send an identity client, decoded by the browser from the coding negotiated.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium } from '../support/browser.ts';
import { useRealOriginGateway } from '../support/gateway-fixture.ts';

const real = useRealOriginGateway();

test('Chromium asks with its own Accept-Encoding, gets a compressed search and decodes the JSON', async () => {
  const { fx } = real;
  const target = '/v1/books?q=the&limit=50';
  const identity = await fx.get(target);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ extraHTTPHeaders: { authorization: `Bearer ${await fx.token()}`, 'x-request-id': 'chromium-search' } });
    const response = await page.goto(`${fx.gateway.url}${target}`);
    assert.ok(response !== null);
    assert.equal(response.status(), 200);
    const asked = (await response.request().allHeaders())['accept-encoding'] ?? '';
    assert.match(asked, /gzip/, `the browser's own Accept-Encoding: ${asked}`);
    const headers = await response.allHeaders();
    assert.equal(headers['content-encoding'], 'gzip', 'the gateway prefers gzip among what the browser weighs equally');
    assert.ok(Number(headers['content-length']) * 4 < Buffer.byteLength(identity.body));
    const shown = await page.locator('body').innerText();
    assert.deepEqual(JSON.parse(shown), JSON.parse(identity.body));
    const line = fx.logs.lines().find((l) => l.reqId === 'chromium-search');
    assert.equal(line?.encoding, 'gzip');
    assert.equal(line.bytes, Number(headers['content-length']));
  } finally {
    await browser.close();
  }
});
