// Browser-test harness: serves build/site on 127.0.0.1 and drives Debian's Chromium with playwright-core.
import { mkdirSync } from 'node:fs';
import { after } from 'node:test';
import path from 'node:path';
import { launchChromium } from '../../scripts/dev/chromium.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';
import { root, siteDir } from '../node/engine.mjs';

// The tree's paths (TALLY_SITE_DIR, TALLY_CLI override them), shared with the node tests.
export { root, siteDir, nativeCli } from '../node/engine.mjs';
// Screenshots are opt-in: a test run makes none; scripts/dev/screenshots.sh sets TALLY_SCREENSHOTS to a folder
// (build/screenshots) and runs the files that take them. Tests never write into the tree.
export const screenshotDir = process.env.TALLY_SCREENSHOTS ? path.resolve(process.env.TALLY_SCREENSHOTS) : null;
const inTree = (dir) => !path.relative(root, dir).startsWith('..') && !path.isAbsolute(path.relative(root, dir));
if (screenshotDir && inTree(screenshotDir) && !screenshotDir.startsWith(path.join(root, 'build') + path.sep))
  throw new Error(
    `TALLY_SCREENSHOTS=${screenshotDir} is inside the tree: use build/screenshots or a folder outside it`,
  );

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 812 };

// One server and one Chromium per test file (each file runs in its own process), started by the file's first
// startSite() and closed after its last test; every page gets a fresh browser context, so no test sees another's
// storage, cookies or URL state.
let shared = null;
/** Extra Chromium flags for this file's browser (set before its first startSite(); the WebGPU tests use it). */
let extraArgs = [];
export function browserArgs(args) {
  if (shared) throw new Error('browserArgs() must come before the first startSite() of the file');
  extraArgs = args;
}
/** The software WebGPU adapter (SwiftShader) in headless Chromium: WebGPU on a machine without a GPU. */
export const SOFTWARE_WEBGPU_ARGS = ['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'];
after(async () => {
  if (!shared) return;
  const { server, browser } = await shared;
  await browser?.close();
  await server.close();
});

async function startShared() {
  const server = await startServer(siteDir, 0);
  try {
    // playwright gives each launch a fresh temporary profile (the --user-data-dir of a plain chromium run).
    return { server, browser: await launchChromium({ timeout: 60_000, args: extraArgs }) };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/**
 * The file's server and browser for one test: { url, browser, newPage(viewport), close() }. `browser` opens
 * contexts and pages (each page in a context of its own); close() closes those this test opened.
 */
export async function startSite() {
  shared ??= startShared();
  const { server, browser } = await shared;
  const contexts = [];
  const track = (context) => (contexts.push(context), context);
  const facade = {
    newContext: async (options) => track(await browser.newContext(options)),
    newPage: async (options) => (await facade.newContext(options)).newPage(),
  };
  return {
    url: server.url,
    browser: facade,
    /** A new page that records console errors and uncaught exceptions in page.errors. */
    async newPage(viewport = DESKTOP) {
      const page = await facade.newPage({ viewport });
      page.errors = [];
      page.on('pageerror', (error) => page.errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') page.errors.push(`console: ${message.text()}`);
      });
      return page;
    },
    async close() {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
    },
  };
}

/** startSite() for test `t` (closed when it ends) and a first page on it: { site, page }. */
export async function sitePage(t, viewport = DESKTOP) {
  const site = await startSite();
  t.after(() => site.close());
  return { site, page: await site.newPage(viewport) };
}

/** Saves a screenshot to $TALLY_SCREENSHOTS/<name>.png when that is set (scripts/dev/screenshots.sh); else does nothing. */
export async function screenshot(target, name, options = {}) {
  if (!screenshotDir) return;
  mkdirSync(screenshotDir, { recursive: true });
  await target.screenshot({ path: path.join(screenshotDir, `${name}.png`), ...options });
}
