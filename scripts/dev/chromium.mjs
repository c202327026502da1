// One way to start Debian's Chromium headless for the tests, the benchmarks and the package check: the flags keep
// it from reaching the network on its own (updates, sync, QUIC) and let it run as root without a GPU.
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Chromium ($CHROMIUM or /usr/bin/chromium) headless; playwright gives each launch a fresh profile. */
export function launchChromium(options = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    ...options,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}
