// <tally-inference> (web/widgets/inference.js): its numbers are the engine's, the batch sweep is drawn,
// GQA changes the cache, bad input names its field, and refused URL values go back with a notice.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, DESKTOP, PHONE, sitePage } from './harness.mjs';
import { setControl, errors, openWidgetAlone, openSection, mountAll } from './page-helpers.mjs';

const open = (site, viewport, colorScheme) => openSection(site, 'inference', 'tally-inference', viewport, colorScheme);

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
  const { site, page } = await sitePage(t);
  // 5 does not divide the 32 query heads of Llama 3 8B, so the engine refuses it after the URL check passes.
  const widget = await openWidgetAlone(site, page, 'tally-inference', 'model="llama-3-8b" url-state', {
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

/** The rows of the widget's "What the KV cache holds" table: kind and the text of each column. */
function layerRows(widget) {
  return widget.locator('[data-out="layers"] tbody tr').evaluateAll((rows) =>
    rows.map((tr) => ({
      kind: tr.dataset.kind,
      layers: tr.cells[0].textContent,
      holds: tr.querySelector('[data-col="holds"]').textContent,
      bytesPerLayerToken: tr.querySelector('[data-col="bytes_per_layer_token"]').textContent,
      tokens: tr.querySelector('[data-col="tokens"]').textContent,
      perSequence: tr.querySelector('[data-col="bytes_per_sequence"]').textContent,
    })),
  );
}

/** The table rows the engine's kv_layers should give, formatted as the widget formats them. */
async function expectedRows(fmt, r) {
  const count = (n) => n.toLocaleString('en-US');
  return Promise.all(
    r.kv_layers.map(async (g) => ({
      kind: g.kind,
      bytesPerLayerToken: `${count(g.bytes_per_layer_token)} B`,
      tokens: count(g.tokens),
      perSequence: await fmt('formatBytes', g.bytes_per_sequence),
    })),
  );
}

/** Waits until the widget shows the KV cache of `r` (the engine's answer for what was just set). */
async function waitForKv(page, widget, fmt, r) {
  const kvOut = await widget.locator('[data-out="kv"]').elementHandle();
  await page.waitForFunction(
    ([el, expected]) => el.textContent === expected,
    [kvOut, await fmt('formatBytes', r.kv_cache_bytes)],
  );
}

test("the inference widget offers every engine preset and shows what each kind of layer caches: DeepSeek-V3's latent, gpt-oss's windows", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);
  const presets = await page.evaluate(async () =>
    (await (await import('./engine.js')).getEngine()).call('presets', {}),
  );
  const optionValues = (name) =>
    widget.locator(`select[name="${name}"] option`).evaluateAll((els) => els.map((e) => e.value));
  assert.deepEqual(
    await optionValues('model'),
    presets.models.map((m) => m.id),
  );
  assert.deepEqual(
    await optionValues('hardware'),
    presets.hardware.map((h) => h.id),
  );
  for (const id of ['deepseek-v3', 'gpt-oss-120b', 'gemma-2-9b'])
    assert.ok((await optionValues('model')).includes(id), id);
  for (const id of ['b200', 'gb300-nvl72', 'mi325x', 'mi355x'])
    assert.ok((await optionValues('hardware')).includes(id), id);

  // DeepSeek-V3 at 128k on a B200: one kind of layer, caching the latent and the RoPE key.
  await setControl(widget, 'model', 'deepseek-v3');
  await setControl(widget, 'hardware', 'b200');
  await setControl(widget, 'context', '131072');
  const ds = await engine({ model: 'deepseek-v3', hardware: 'b200', batch: 8, context: 131072, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, ds);
  const dsRows = await layerRows(widget);
  assert.deepEqual(
    dsRows.map(({ kind, bytesPerLayerToken, tokens, perSequence }) => ({
      kind,
      bytesPerLayerToken,
      tokens,
      perSequence,
    })),
    await expectedRows(fmt, ds),
  );
  assert.equal(dsRows.length, 1);
  assert.match(dsRows[0].layers, /^61 full attention$/);
  assert.match(dsRows[0].holds, /^latent 512 \+ RoPE key 64 values \(per-head K and V: 40,960\)$/);
  assert.equal(dsRows[0].bytesPerLayerToken, '1,152 B');
  assert.match(await out(widget, 'kv_note'), /Latent attention: .* 512 \+ 64 values per token instead of 40,960/);

  // gpt-oss-120b: 18 full layers keep all 131,072 tokens, 18 windowed layers the last 128.
  await setControl(widget, 'model', 'gpt-oss-120b');
  const oss = await engine({ model: 'gpt-oss-120b', hardware: 'b200', batch: 8, context: 131072, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, oss);
  const ossRows = await layerRows(widget);
  assert.deepEqual(
    ossRows.map(({ kind, bytesPerLayerToken, tokens, perSequence }) => ({
      kind,
      bytesPerLayerToken,
      tokens,
      perSequence,
    })),
    await expectedRows(fmt, oss),
  );
  assert.deepEqual(
    ossRows.map((r) => [r.kind, r.layers, r.tokens]),
    [
      ['full', '18 full attention', '131,072'],
      ['windowed', '18 windowed (last 128 tokens)', '128'],
    ],
  );
  assert.equal(ossRows[1].holds, 'K 512 + V 512 values (without GQA: 8,192)');
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-gpt-oss-layers');
  assert.equal(
    oss.kv_layers[0].bytes_per_sequence + oss.kv_layers[1].bytes_per_sequence,
    oss.kv_bytes_per_sequence,
    'the kinds add up to the cache of one sequence',
  );
  assert.match(
    await out(widget, 'kv_note'),
    new RegExp(
      `each new token adds ${oss.kv_layers[0].bytes_per_token.toLocaleString('en-US')} B .* instead of ${oss.kv_bytes_per_token.toLocaleString('en-US')} B`,
    ),
  );
  // Below the window every layer keeps every token.
  await setControl(widget, 'context', '100');
  const short = await engine({ model: 'gpt-oss-120b', hardware: 'b200', batch: 8, context: 100, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, short);
  assert.deepEqual(
    (await layerRows(widget)).map((r) => r.tokens),
    ['100', '100'],
  );
  // Hybrids name their recurrent layers by the mixer the model declares: Jamba's Mamba-1, Kimi Linear's KDA.
  for (const [model, kind, name] of [
    ['jamba-1-5-mini', 'mamba', 'Mamba-1'],
    ['kimi-linear-48b-a3b', 'linear_attention', 'linear attention (Kimi Delta Attention)'],
  ]) {
    await setControl(widget, 'model', model);
    await widget.locator(`[data-out="layers"] tbody tr[data-kind="${kind}"]`).first().waitFor({ state: 'attached' });
    const row = widget.locator(`[data-out="layers"] tbody tr[data-kind="${kind}"]`).first();
    assert.match(await row.textContent(), new RegExp(name.replace(/[()]/g, '\\$&')), model);
  }
  assert.doesNotMatch(await widget.locator('.widget').textContent(), /NaN|Infinity|undefined/);
  assert.deepEqual(page.errors, []);
});

test("the inference widget shows the engine's refusal of KV heads for latent attention, naming the field", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  await setControl(widget, 'model', 'deepseek-v3');
  assert.equal(await widget.locator('input[name="kv_heads"]').inputValue(), '128', "the model's own 128 heads");
  await setControl(widget, 'kv_heads', '8');
  assert.match(await widget.locator('#f-kv_heads-error').textContent(), /num_kv_heads = num_heads \(128\), got 8/);
  assert.equal(await out(widget, 'kv'), '—');
  assert.equal(await widget.locator('[data-out="layers"] tbody tr').count(), 0, 'no stale breakdown');
  assert.equal(await out(widget, 'kv_note'), '');
  await setControl(widget, 'kv_heads', '128');
  assert.equal(await widget.locator('#f-kv_heads-error').textContent(), '');
  assert.equal(await widget.locator('[data-out="layers"] tbody tr').count(), 1);
  assert.deepEqual(page.errors, []);
});

test('the new model, GPU and KV format survive a URL round trip, with the same breakdown', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const key = await widget.evaluate((el) => el.key);
  await setControl(widget, 'model', 'gpt-oss-120b');
  await setControl(widget, 'hardware', 'mi355x');
  await setControl(widget, 'kv_dtype', 'mxfp8');
  await setControl(widget, 'context', '65536');
  await page.waitForFunction(
    (k) =>
      ['model=gpt-oss-120b', 'hardware=mi355x', 'kv_dtype=mxfp8', 'context=65536'].every((p) =>
        location.search.includes(`${k}.${p}`),
      ),
    key,
  );
  const rows = await layerRows(widget);

  const again = await site.browser.newPage({ viewport: DESKTOP });
  again.errors = [];
  again.on('pageerror', (error) => again.errors.push(error.message));
  await again.goto(page.url());
  await again.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(again);
  const restored = again.locator('tally-inference');
  const state = await restored.evaluate((el) => el.getState());
  assert.deepEqual(
    [state.model, state.hardware, state.kv_dtype, state.context, state.kv_heads],
    ['gpt-oss-120b', 'mi355x', 'mxfp8', '65536', '8'],
  );
  const { engine, fmt } = inPage(again);
  const r = await engine({ model: 'gpt-oss-120b', hardware: 'mi355x', batch: 8, context: 65536, kv_dtype: 'mxfp8' });
  await waitForKv(again, restored, fmt, r);
  assert.deepEqual(await layerRows(restored), rows);
  assert.equal(rows[1].tokens, '128');
  assert.deepEqual([...page.errors, ...again.errors], []);
});

test('the inference widget shows no throughput for a model that does not fit, and its curve ends at the most that fit', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);

  // Llama 3 8B at 8,192 tokens: the engine's sweep ends at its max_batch, and the last dot is that batch.
  await setControl(widget, 'context', '8192');
  const r = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 8192, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, r);
  const batches = await widget
    .locator('svg.chart circle[data-batch]')
    .evaluateAll((els) => els.map((e) => Number(e.dataset.batch)));
  assert.deepEqual(
    batches,
    r.sweep.map((s) => s.batch),
  );
  assert.equal(Math.max(...batches), r.max_batch, 'the curve stops at the largest batch that fits');
  assert.equal(await out(widget, 'max_batch'), await fmt('formatNumber', r.max_batch));
  assert.ok((await widget.locator('svg.chart text.ytick').count()) >= 3, 'at least three y ticks');
  assert.ok((await widget.locator('svg.chart text.xtick').count()) >= 3, 'at least three x ticks');

  // One more sequence than fits: no decode rate, a line saying so, and no ring past the curve's end.
  await setControl(widget, 'batch', String(r.max_batch + 1));
  await page.waitForFunction(
    (el) => el.textContent.startsWith('Does not fit'),
    await widget.locator('[data-out="fit_note"]').elementHandle(),
  );
  assert.equal(await out(widget, 'decode'), 'does not fit');
  assert.equal(await out(widget, 'per_seq'), 'does not fit');
  assert.match(await out(widget, 'fit_note'), new RegExp(`at most ${r.max_batch} fit`));
  assert.equal(await widget.locator('svg.chart circle.you').count(), 0);

  // Llama 3 70B in bf16 on one H100: nothing fits, so nothing is drawn and no rate is shown.
  await setControl(widget, 'batch', '8');
  await setControl(widget, 'model', 'llama-3-70b');
  const big = await engine({ model: 'llama-3-70b', hardware: 'h100-sxm', batch: 8, context: 8192, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, big);
  assert.equal(big.max_batch, 0);
  assert.equal(await out(widget, 'max_batch'), '0');
  for (const key of ['decode', 'per_seq', 'prefill']) assert.equal(await out(widget, key), 'does not fit', key);
  const note = await out(widget, 'fit_note');
  assert.match(note, /^Does not fit: the weights alone/);
  assert.ok(note.includes(await fmt('formatBytes', big.usable_bytes)), 'the usable capacity, from the engine');
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity|undefined/);
  assert.equal(await widget.locator('svg.chart circle').count(), 0, 'no curve');
  assert.equal(await widget.locator('svg.chart').isVisible(), false);
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-70b-does-not-fit-desktop');

  // Llama 3 70B in bf16 on a B200 fits: the rates come back, with three y ticks.
  await setControl(widget, 'hardware', 'b200');
  const b200 = await engine({ model: 'llama-3-70b', hardware: 'b200', batch: 8, context: 8192, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, b200);
  assert.ok(b200.max_batch > 8);
  assert.match(await out(widget, 'decode'), /memory-bound/);
  assert.equal(await out(widget, 'fit_note'), '');
  assert.ok((await widget.locator('svg.chart text.ytick').count()) >= 3, 'at least three y ticks');
  assert.deepEqual(page.errors, []);
});

test('the does-not-fit state reads at 375 px', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, PHONE);
  const { engine, fmt } = inPage(page);
  await setControl(widget, 'model', 'llama-3-70b');
  const big = await engine({ model: 'llama-3-70b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, big);
  assert.equal(await out(widget, 'decode'), 'does not fit');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 375 px (${overflow}px)`);
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-70b-does-not-fit-phone');
  await setControl(widget, 'model', 'llama-3-8b');
  const small = await engine({ model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'bf16' });
  await waitForKv(page, widget, fmt, small);
  assert.ok((await widget.locator('svg.chart text.xtick').count()) >= 3, 'at least three x ticks at 375 px');
  await screenshot(page.locator('figure[data-widget="tally-inference"]'), 'inference-8b-phone');
  assert.deepEqual(page.errors, []);
});

test("the inference widget's weights format: gpt-oss-120b in MXFP4 holds the engine's weight bytes, about a quarter of bf16", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);
  const options = await widget
    .locator('select[name="weights_dtype"] option')
    .evaluateAll((els) => els.map((e) => e.value));
  for (const id of ['bf16', 'fp8', 'mxfp4', 'nvfp4']) assert.ok(options.includes(id), `${id} in ${options}`);
  await setControl(widget, 'model', 'gpt-oss-120b');
  await setControl(widget, 'weights_dtype', 'mxfp4');
  const args = { model: 'gpt-oss-120b', hardware: 'h100-sxm', batch: 8, context: 4096 };
  const mx = await engine({ ...args, weights_dtype: 'mxfp4' });
  const bf16 = await engine({ ...args, weights_dtype: 'bf16' });
  // MXFP4: 4 bits a value and one 8-bit scale per 32 (OCP MX v1.0), 4.25 bits against bf16's 16.
  assert.ok(Math.abs((mx.weights_bytes * 16) / (bf16.weights_bytes * 4.25) - 1) < 1e-9);
  const weightsOut = await widget.locator('[data-out="weights"]').elementHandle();
  await page.waitForFunction(
    ([el, expected]) => el.textContent.includes(expected),
    [weightsOut, await fmt('formatBytes', mx.weights_bytes)],
  );
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity|undefined/);
  assert.deepEqual(page.errors, []);
});
