// The reader at the other end, beyond what axe checks: what a screen reader is told after an edit (each live region's
// text, the memory widget's being its verdict and not its table), and what a forced-colours reader (a Windows contrast
// theme) sees of each chart's key: every legend swatch keeps the colour of the marks it names.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP, screenshot } from './harness.mjs';
import { courseSite } from './kit-helpers.mjs';

let site;
let host;
before(async () => {
  site = await startSite();
  host = await courseSite({
    'index.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course</title>
<script type="module" src="${new URL('tally-widgets.js', site.url).href}"></script></head><body><h1>Week 3</h1>
<tally-memory-budget eager model="llama-3-8b" hardware="h100-sxm" gpus="8" zero="3"></tally-memory-budget>
<tally-step eager model="llama-3-70b" gpus="64" tp="8" pp="2"></tally-step>
<tally-float eager format="e4m3" value="500"></tally-float>
<tally-compute eager model="llama-3-70b" tokens="15e12" gpus="1024" mfu="0.4"></tally-compute>
</body></html>`,
  });
});
after(async () => {
  await host?.close();
  await site?.close();
});

/** Each live region of `tag` (aria-live, role=status or alert) with the text it holds now. */
function liveRegions(page, tag) {
  return page.locator(tag).evaluate((el) =>
    [...el.shadowRoot.querySelectorAll('[aria-live], [role="status"], [role="alert"]')]
      .filter((r) => r.getAttribute('aria-live') !== 'off')
      .map((r) => ({
        className: r.className.baseVal ?? r.className,
        text: r.textContent.replace(/\s+/g, ' ').trim(),
        holdsTable: !!r.querySelector('table, svg'),
      })),
  );
}

test("after an edit the memory widget's live regions hold its verdict only: no table, no chart", async (t) => {
  const page = await site.newPage(DESKTOP);
  t.after(() => page.close());
  await page.goto(host.url);
  const memory = page.locator('tally-memory-budget');
  await memory.evaluate((el) => el.ready);
  await memory.evaluate((el) => el.setState({ gpus: 16 }));
  const regions = await liveRegions(page, 'tally-memory-budget');
  assert.ok(
    regions.every((r) => !r.holdsTable),
    `no live region holds a table or chart: ${JSON.stringify(regions)}`,
  );
  const verdict = regions.find((r) => r.className.includes('verdict'));
  assert.ok(verdict, `the verdict is a live region: ${JSON.stringify(regions)}`);
  assert.match(verdict.text, /^(Fits|Does not fit)/);
  const announced = regions.reduce((sum, r) => sum + r.text.length, 0);
  assert.ok(announced < 400, `one edit announces ${announced} characters: ${JSON.stringify(regions)}`);
});

test('under forced colours every chart key keeps its colour and matches the marks it names', async (t) => {
  const context = await site.browser.newContext({ viewport: DESKTOP, forcedColors: 'active' });
  const page = await context.newPage();
  await page.goto(host.url);
  assert.ok(await page.evaluate(() => matchMedia('(forced-colors: active)').matches), 'forced colours are on');
  for (const tag of ['tally-memory-budget', 'tally-step', 'tally-float'])
    await page.locator(tag).evaluate((el) => el.ready);
  const keys = await page.evaluate(() => {
    const root = (tag) => document.querySelector(tag).shadowRoot;
    const bg = (el, pseudo) => getComputedStyle(el, pseudo).backgroundColor;
    const fill = (el) => getComputedStyle(el).fill;
    const canvas = (() => {
      const probe = document.createElement('div');
      probe.style.background = 'Canvas';
      document.body.append(probe);
      const value = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return value;
    })();
    const memory = root('tally-memory-budget');
    const memoryRows = [...memory.querySelectorAll('[data-out="table"] tbody tr:has(.swatch)')].map((tr) => ({
      key: bg(tr.querySelector('.swatch')),
      mark: (() => {
        const seg = memory.querySelector(`rect.seg[data-term="${tr.dataset.term}"]`);
        return seg ? fill(seg) : null;
      })(),
    }));
    const step = root('tally-step');
    const stepKeys = [...step.querySelectorAll('[data-out="legend"] > span[style]:not([style*="transparent"])')].map(
      (span) => bg(span, '::before'),
    );
    const stepMarks = [...step.querySelectorAll('rect.seg')].map(fill);
    const float = root('tally-float');
    const floatKeys = [...float.querySelectorAll('.legend .sw')].map((sw) => bg(sw));
    const floatMarks = ['sign', 'exponent', 'mantissa']
      .map((kind) => float.querySelector(`.bit.${kind}`))
      .filter(Boolean)
      .map((b) => bg(b));
    return { canvas, memoryRows, stepKeys, stepMarks, floatKeys, floatMarks };
  });
  await screenshot(page, 'forced-colours', { fullPage: true });
  const visible = (c) => c !== keys.canvas && c !== 'rgba(0, 0, 0, 0)';
  assert.ok(keys.memoryRows.length > 3, `memory rows: ${JSON.stringify(keys.memoryRows)}`);
  for (const row of keys.memoryRows) {
    assert.ok(visible(row.key), `a memory swatch is drawn (${row.key}, canvas ${keys.canvas})`);
    if (row.mark) assert.equal(row.key, row.mark, 'a memory swatch matches its bar segment');
  }
  assert.ok(keys.stepKeys.length > 0 && keys.stepKeys.every(visible), `step legend: ${keys.stepKeys}`);
  assert.deepEqual(keys.stepKeys, keys.stepMarks, "the step legend's swatches match the timeline's segments");
  assert.ok(keys.floatKeys.length > 0 && keys.floatKeys.every(visible), `float legend: ${keys.floatKeys}`);
  assert.deepEqual(keys.floatKeys, keys.floatMarks, "the float legend's swatches match the bit fields");
  await context.close();
});
