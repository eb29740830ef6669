/**
 * Debian's Chromium, headless, driven by playwright-core (which brings no browser of its own).
 * The flags keep it off the network: this machine's closed network refuses its background
 * connections, and every start would try to reach Google's hosts.
 */
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
