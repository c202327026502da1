// The single-file route (docs/EMBEDDING.md): scripts/build/build-single-file.mjs writes one HTML file that works from
// file:// with the network cut off. Every widget on it computes the engine's numbers, every inline value is
// filled, KaTeX's fonts load from the file itself, and no request leaves the file.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startSite, screenshot, root, siteDir, DESKTOP } from './harness.mjs';
import { assertComputes } from './kit-helpers.mjs';

const WIDGETS = [
  'tally-memory-budget',
  'tally-compute',
  'tally-float',
  'tally-roofline',
  'tally-step',
  'tally-inference',
  'tally-collectives',
];

test("single file: opened from file:// with no network, every widget computes the engine's numbers", async (t) => {
  const outFile = path.join(os.tmpdir(), `tally-single-${process.pid}.html`);
  execFileSync(
    process.execPath,
    [path.join(root, 'scripts/build/build-single-file.mjs'), '--site', siteDir, '--out', outFile],
    { stdio: 'pipe' },
  );
  const site = await startSite(); // only for its browser: the page below is a file
  t.after(() => site.close());
  const page = await site.newPage(DESKTOP);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.route(/^(https?|wss?|ftp):/, (route) => route.abort()); // the network is cut off
  await page.goto(pathToFileURL(outFile).href);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 30000 });

  for (const tag of WIDGETS) {
    const widgets = page.locator(tag);
    assert.ok((await widgets.count()) >= 1, `${tag} is on the page`);
    for (let i = 0; i < (await widgets.count()); i++) await assertComputes(widgets.nth(i), `${tag} #${i + 1}`);
  }
  await page.waitForFunction(() =>
    [...document.querySelectorAll('tally-value')].every((v) => v.dataset.state !== 'loading'),
  );
  const values = await page.$$eval('tally-value', (els) => els.map((e) => e.dataset.state));
  assert.ok(
    values.length > 50 && values.every((s) => s === 'ok'),
    `every inline value computed (${values.filter((s) => s !== 'ok').length} not)`,
  );
  // KaTeX's fonts come from data: URLs inside the file.
  assert.equal(
    await page.evaluate(async () => {
      await document.fonts.ready;
      return document.fonts.check('16px KaTeX_Main');
    }),
    true,
  );
  // Measuring needs workers: the roofline says so instead of failing.
  assert.match(
    await page
      .locator('tally-roofline')
      .first()
      .evaluate((el) => el.shadowRoot.querySelector('.status').textContent),
    /needs this page served over http/,
  );
  const outside = requests.filter((u) => !/^(file|data|blob):/.test(u));
  assert.deepEqual(outside, [], 'no request leaves the file');
  assert.deepEqual(page.errors, []);
  await page.locator('tally-memory-budget').first().scrollIntoViewIfNeeded();
  await screenshot(page, 'route-single-file');
  console.log(`# single file: ${statSync(outFile).size} bytes`);
});
