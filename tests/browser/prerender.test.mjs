// The page read without JavaScript (scripts/build/build-site.mjs prerenders every engine number): each inline
// value is present with scripts off and equals what the engine computes in the browser with scripts on.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, root, DESKTOP, PHONE } from './harness.mjs';
import { errors, gotoAgain, mountAll, watch } from './page-helpers.mjs';
import { withRunsFile } from '../../scripts/build/runs-file.mjs';

test('with JavaScript off the page holds every inline number, equal to what the engine computes with it on', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const off = await site.browser.newPage({ viewport: DESKTOP, javaScriptEnabled: false });
  await off.goto(site.url);
  const values = await off.$$eval('tally-value', (els) =>
    els.map((e) => ({
      method: e.getAttribute('method'),
      args: e.getAttribute('args') ?? '{}',
      field: e.getAttribute('field'),
      format: e.getAttribute('format'),
      text: e.textContent,
      state: e.dataset.state,
    })),
  );
  assert.ok(values.length >= 150, `${values.length} inline values in the static page`);
  assert.deepEqual(
    values.filter((v) => v.state !== 'ok' || !v.text || /NaN|Infinity|…/.test(v.text)),
    [],
    'every value was written at build time',
  );
  assert.ok((await off.locator('noscript').count()) >= 1, 'a <noscript> note says what needs scripts');
  assert.ok((await off.locator('tally-recipes table tbody tr').count()) >= 5, 'the recipe table is in the static page');
  assert.ok((await off.locator('figure.diagram svg').count()) >= 10, 'figures and curves are inline SVG');
  // A widget needs scripts: without them neither its empty box nor its caption (which describes bars and
  // controls) is shown; the static figures, drawn at build time, stay.
  const widgetFigures = (page) =>
    page.$$eval('figure.widget-figure', (figs) =>
      figs.map((f) => ({ widget: f.dataset.widget, shown: getComputedStyle(f).display !== 'none' })),
    );
  const hidden = await widgetFigures(off);
  assert.ok(hidden.length >= 5, `${hidden.length} widget figures`);
  assert.deepEqual(
    hidden.filter((f) => f.shown),
    [],
    'no widget caption without scripts',
  );
  assert.ok(await off.locator('figure.diagram').first().isVisible(), 'static figures stay');

  const on = await site.newPage(DESKTOP);
  await on.goto(site.url);
  await on.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(on);
  // The browser's engine and the page's own formatting code, for every value the static page showed. A build-time
  // runs_file (chapter 8b's validation statistics) is given as the file's text, as scripts/build/build-site.mjs does.
  const callArgs = (args) => JSON.stringify(withRunsFile(JSON.parse(args), root));
  const live = await on.evaluate(
    async (items) => {
      const { getEngine } = await import('./engine.js');
      const { valueText } = await import('./widgets/value.js');
      const engine = await getEngine();
      return items.map((v) => {
        try {
          return valueText(v.method, engine.call(v.method, JSON.parse(v.args)), v.field, v.format);
        } catch (error) {
          return `error: ${error.message}`;
        }
      });
    },
    values.map((v) => ({ ...v, args: callArgs(v.args) })),
  );
  const mismatches = values.map((v, i) => ({ ...v, live: live[i] })).filter((v) => v.live !== v.text);
  assert.deepEqual(mismatches, [], 'static text equals the live engine text');
  // And the page with scripts on shows the same text (prerendered values are kept, not recomputed differently).
  const shown = await on.$$eval('tally-value', (els) => els.map((e) => e.textContent));
  assert.deepEqual(
    shown,
    values.map((v) => v.text),
  );
  assert.ok(
    (await widgetFigures(on)).every((f) => f.shown),
    'with scripts every widget figure and its caption is shown',
  );
  assert.deepEqual(on.errors, []);

  await off.locator('#fig-matmul').scrollIntoViewIfNeeded();
  await screenshot(off, 'noscript-desktop-figure');
});

test('figures and problems read at 375 px in light and dark themes', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  // One tab for the four loads: each sets the width and the scheme, then loads the page as a new document.
  const page = watch(await site.newPage());
  for (const colorScheme of ['light', 'dark']) {
    for (const [name, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ]) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      await gotoAgain(page, site.url);
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
      await mountAll(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name} ${colorScheme}: no sideways scrolling (overflow ${overflow}px)`);
      // Figure text stays legible: the smallest SVG text is at least 11 CSS px once scaled to the column (the layout audit's minimum).
      const smallest = await page.$$eval('figure.diagram svg', (svgs) =>
        Math.min(
          ...svgs.map((svg) => {
            const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            return Math.min(
              ...[...svg.querySelectorAll('text')].map((el) => parseFloat(getComputedStyle(el).fontSize) * scale),
            );
          }),
        ),
      );
      assert.ok(smallest >= 11, `${name} ${colorScheme}: smallest figure text ${smallest.toFixed(1)} px`);
      for (const figure of ['fig-bit-layouts', 'fig-pipeline', 'fig-zero-vs-gpus']) {
        await page.locator(`#${figure}`).scrollIntoViewIfNeeded();
        await screenshot(page.locator(`#${figure}`), `figure-${figure.slice(4)}-${name}-${colorScheme}`);
      }
      const problems = page.locator('section#flops .problems details').first();
      await problems.locator('summary').click();
      assert.equal(await problems.evaluate((d) => d.open), true, 'an answer unfolds');
      await screenshot(page.locator('section#flops .problems'), `problems-${name}-${colorScheme}`);
      assert.deepEqual(errors(page), [], `${name} ${colorScheme}: no console errors`);
    }
  }
  await page.close();
});
