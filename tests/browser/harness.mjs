// Browser-test harness: serves build/site on 127.0.0.1 and drives Debian's Chromium with playwright-core.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../../scripts/chromium.mjs';
import { startServer } from '../../scripts/static-server.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const siteDir = process.env.TALLY_SITE_DIR ?? path.join(root, 'build/site');
// Tests never write into the tree: screenshots go to build/screenshots unless TALLY_SCREENSHOT_DIR opts in
// (`TALLY_SCREENSHOT_DIR=docs/screenshots node --test tests/browser/...` refreshes the committed ones).
export const screenshotDir = path.resolve(root, process.env.TALLY_SCREENSHOT_DIR ?? 'build/screenshots');
export const nativeCli = process.env.TALLY_CLI ?? path.join(root, 'build/native/tally');

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 812 };

/** Starts the static server and the browser; returns { url, browser, newPage(viewport), close() }. */
export async function startSite() {
  const server = await startServer(siteDir, 0);
  let browser;
  try {
    // playwright gives each launch a fresh temporary profile (the --user-data-dir of a plain chromium run).
    browser = await launchChromium({ timeout: 60_000 });
  } catch (error) {
    await server.close();
    throw error;
  }
  const pages = [];
  return {
    url: server.url,
    browser,
    /** A new page that records console errors and uncaught exceptions in page.errors. */
    async newPage(viewport = DESKTOP) {
      const page = await browser.newPage({ viewport });
      page.errors = [];
      page.on('pageerror', (error) => page.errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') page.errors.push(`console: ${message.text()}`);
      });
      pages.push(page);
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/** Saves a screenshot to <screenshotDir>/<name>.png (build/screenshots unless TALLY_SCREENSHOT_DIR says otherwise). */
export async function screenshot(target, name, options = {}) {
  mkdirSync(screenshotDir, { recursive: true });
  await target.screenshot({ path: path.join(screenshotDir, `${name}.png`), ...options });
}
