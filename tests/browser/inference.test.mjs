// <tally-inference> (web/widgets/inference.js): its numbers are the engine's, the batch sweep is drawn,
// GQA changes the cache, bad input names its field, and refused URL values go back with a notice.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, DESKTOP, PHONE } from './harness.mjs';
import { setControl, errors, openWidgetAlone } from './page-helpers.mjs';

async function open(site, viewport, colorScheme = 'light') {
  const page = await site.browser.newPage({ viewport, colorScheme });
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  await page.goto(`${site.url}#inference`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  const widget = page.locator('tally-inference');
  await widget.scrollIntoViewIfNeeded();
  return { page, widget };
}

/** The page's own engine (method inference) and base.js formatters, called inside the page. */
function inPage(page) {
  return {
    engine: (args) =>
      page.evaluate(async (a) => (await (await import('./engine.js')).getEngine()).call('inference', a), args),
    fmt: (fn, value) => page.evaluate(async ([name, v]) => (await import('./widgets/base.js'))[name](v), [fn, value]),
  };
}

const out = (widget, key) => widget.locator(`[data-out="${key}"]`).textContent();

test("the inference widget shows the engine's cache, rates and crossover, and follows GQA", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);

  const r = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'bf16' });
  assert.equal(await out(widget, 'kv'), await fmt('formatBytes', r.kv_cache_bytes));
  assert.equal(await out(widget, 'weights'), await fmt('formatBytes', r.weights_bytes));
  assert.equal(await out(widget, 'prefill'), await fmt('formatNumber', r.prefill_tokens_per_s));
  assert.match(await out(widget, 'decode'), /memory-bound/);
  assert.equal(
    await widget.locator('svg.chart circle.lat, svg.chart circle.cmp').count(),
    r.sweep.length,
    'one dot per batch of the sweep',
  );

  // Short contexts reach the crossover; the chart then shows compute-bound (open) dots.
  await widget.locator('input[name="context"]').fill('128');
  const short = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 128, kv_dtype: 'bf16' });
  assert.equal(await out(widget, 'crossover'), await fmt('formatNumber', short.crossover_batch_whole));
  assert.ok((await widget.locator('svg.chart circle.cmp').count()) >= 1);

  // Four times the KV heads: four times the cache (multi-head attention instead of GQA).
  await widget.locator('input[name="context"]').fill('4096');
  const before = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096 });
  await widget.locator('input[name="kv_heads"]').fill('32');
  assert.equal(await out(widget, 'kv'), await fmt('formatBytes', 4 * before.kv_cache_bytes));

  await widget.locator('input[name="kv_heads"]').fill('8');
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-desktop-light');
  assert.deepEqual(page.errors, []);
});

test('the inference widget names the field at fault and never shows NaN', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, PHONE, 'dark');
  // Leaving the field shows its error at once (while typing, errors wait: base.js).
  await widget.locator('input[name="batch"]').fill('0');
  await widget.locator('input[name="batch"]').press('Tab');
  assert.match(await widget.locator('#f-batch-error').textContent(), /batch/);
  assert.equal(await out(widget, 'decode'), '—');
  await widget.locator('input[name="batch"]').fill('8');
  await widget.locator('input[name="kv_heads"]').fill('5');
  await widget.locator('input[name="kv_heads"]').press('Tab');
  assert.match(await widget.locator('#f-kv_heads-error').textContent(), /kv|head/i);
  await widget.locator('input[name="kv_heads"]').fill('8');
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 375 px (${overflow}px)`);
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-phone-dark');
  assert.deepEqual(page.errors, []);
});

test("clearing the inference widget's KV heads goes back to the model's own, not an error", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);
  await widget.locator('input[name="kv_heads"]').fill('32');
  const own = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'bf16' });
  assert.notEqual(await out(widget, 'kv'), await fmt('formatBytes', own.kv_cache_bytes), '32 heads: not the default');
  await widget.locator('input[name="kv_heads"]').fill('');
  await widget.locator('input[name="kv_heads"]').press('Tab');
  assert.equal(await widget.locator('#f-kv_heads-error').textContent(), '');
  assert.equal(await out(widget, 'kv'), await fmt('formatBytes', own.kv_cache_bytes), "Llama 3 8B's own 8 KV heads");
  assert.equal(await widget.locator('input[name="kv_heads"]').getAttribute('placeholder'), '8');
  assert.equal((await widget.evaluate((el) => el.getState())).kv_heads, '8', 'the state (and URL) hold the 8');
  assert.deepEqual(page.errors, []);
});

test('the inference widget reverts a URL KV-head count the engine refuses, with a notice, and a new model brings its own KV heads', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const page = await site.newPage(DESKTOP);
  // 5 does not divide the 32 query heads of Llama 3 8B, so the engine refuses it after the URL check passes.
  const widget = await openWidgetAlone(site, page, 'tally-inference', 'model="llama-3-8b"', {
    query: '?inf1.kv_heads=5&inf1.batch=16',
  });
  const state = await widget.evaluate((el) => el.getState());
  assert.equal(state.kv_heads, '8', "back to the model's own 8 KV heads");
  assert.equal(state.batch, '16', 'the URL values the engine accepts stay');
  assert.match(await widget.locator('.url-notice').textContent(), /Ignored URL settings: inf1\.kv_heads/);
  assert.notEqual(await out(widget, 'kv'), '—');

  // Llama 2 7B has multi-head attention: 32 KV heads, by a reader's choice and by setState alike.
  await setControl(widget, 'model', 'llama-2-7b');
  assert.equal(await widget.locator('input[name="kv_heads"]').inputValue(), '32');
  await widget.evaluate((el) => el.setState({ model: 'llama-3-8b' }));
  assert.equal((await widget.evaluate((el) => el.getState())).kv_heads, '8');
  assert.deepEqual(errors(page), []);
});

test('the inference widget offers the block-scaled KV formats and the NVL72 rack, with the engine numbers', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);
  const options = await widget.locator('select[name="kv_dtype"] option').evaluateAll((els) => els.map((e) => e.value));
  for (const id of ['nvfp4', 'mxfp8', 'mxfp4']) assert.ok(options.includes(id), `${id} in ${options}`);

  await setControl(widget, 'hardware', 'gb200-nvl72');
  await setControl(widget, 'kv_dtype', 'nvfp4');
  const r = await engine({ model: 'llama-3-8b', hardware: 'gb200-nvl72', batch: 8, context: 4096, kv_dtype: 'nvfp4' });
  const bf16 = await engine({
    model: 'llama-3-8b',
    hardware: 'gb200-nvl72',
    batch: 8,
    context: 4096,
    kv_dtype: 'bf16',
  });
  // NVFP4 is 4.5 bits a value against bf16's 16 (E4M3 scale per 16 values).
  assert.equal(r.kv_cache_bytes * 16, bf16.kv_cache_bytes * 4.5);
  const kvOut = await widget.locator('[data-out="kv"]').elementHandle();
  await page.waitForFunction(
    ([el, expected]) => el.textContent === expected,
    [kvOut, await fmt('formatBytes', r.kv_cache_bytes)],
  );
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity|undefined/);
  assert.match(await widget.locator('select[name="kv_dtype"] option[value="nvfp4"]').textContent(), /0\.5625 bytes/);
  assert.deepEqual(page.errors, []);
});
