// <tally-memory-budget> in a real browser: its numbers equal the native CLI's, bad input is flagged beside the
// field, the state round-trips through the URL, exports work, and screenshots are saved at two widths.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, DESKTOP, PHONE, sitePage } from './harness.mjs';
import { native, open, setControl, fieldError, gb, errors, watch, mountAll, reopen } from './page-helpers.mjs';
import { hfFixture } from '../node/engine.mjs';

const SETTINGS = {
  model: 'llama-3-8b',
  hardware: 'h100-sxm',
  recipe: 'bf16_mixed_adamw',
  gpus: '8',
  seq: '8192',
  mbs: '2',
  tp: '2',
  pp: '1',
  recompute: 'selective',
  zero: '1',
  flash: true,
};
const ARGS = {
  model: 'llama-3-8b',
  hardware: 'h100-sxm',
  recipe: 'bf16_mixed_adamw',
  gpus: 8,
  seq: 8192,
  micro_batch: 2,
  tp: 2,
  pp: 1,
  recompute: 'selective',
  zero: 1,
  flash_attention: true,
  sequence_parallel: false,
  cuda_context_bytes: 512 * 2 ** 20,
  fragmentation_fraction: 0.05,
};

test('memory budget: Llama 3 8B on 8 H100s (TP 2, ZeRO-1, selective, FlashAttention) shows exactly the native budget', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  for (const [name, value] of Object.entries(SETTINGS)) await setControl(widget, name, value);

  const expected = native('memory_budget', ARGS);
  const shown = await widget.evaluate((el) => ({ args: el.budgetArgs, budget: el.budget }));
  assert.deepEqual(shown.args, ARGS, 'the widget sends the engine the settings on screen');
  assert.deepEqual(shown.budget, expected, 'wasm and native agree to the last bit');

  // The table shows each class's bytes, rounded for reading, and the total.
  for (const id of ['weights', 'gradients', 'master_weights', 'optimizer_states', 'activations'])
    assert.equal(
      await widget.locator(`tr[data-term="${id}"] td.num`).first().textContent(),
      gb(expected.per_gpu_bytes[id]),
      id,
    );
  const verdict = await widget.locator('[data-out="verdict"]').textContent();
  assert.ok(verdict.includes(gb(expected.per_gpu_bytes.total)), verdict);
  assert.match(verdict, expected.fits ? /^Fits/ : /^Does not fit/);
  // The chart has one segment per non-empty class and the capacity line.
  assert.equal(
    await widget.locator('svg rect.seg').count(),
    Object.entries(expected.per_gpu_bytes).filter(([k, v]) => k !== 'total' && v > 0).length,
  );
  assert.equal(await widget.locator('svg line.cap').count(), 1);

  // Hover a segment: the formula and description of that term appear.
  await widget.locator('svg rect.seg[data-term="optimizer_states"]').hover();
  const formula = await widget.locator('[data-out="formula"]').textContent();
  assert.ok(formula.includes(gb(expected.per_gpu_bytes.optimizer_states)), formula);
  const cls = expected.classes.find((c) => c.id === 'optimizer_states');
  assert.ok(
    formula.replace(/\s+/g, '').includes(cls.formula.replace(/[\s_]+/g, '')),
    `${formula} shows ${cls.formula}`,
  );

  // A new length changes numbers, not rows: the rows stay (written in place) and every number cell follows.
  await widget.evaluate((el) => (el.shadowRoot.querySelector('tr[data-term="activations"]').marked = true));
  await setControl(widget, 'seq', '4096');
  const shorter = native('memory_budget', { ...ARGS, seq: 4096 });
  assert.ok(await widget.evaluate((el) => el.shadowRoot.querySelector('tr[data-term="activations"]').marked === true));
  for (const id of ['weights', 'activations'])
    assert.equal(
      await widget.locator(`tr[data-term="${id}"] td.num`).first().textContent(),
      gb(shorter.per_gpu_bytes[id]),
    );
  assert.equal(
    await widget.locator('[data-out="table"] tbody tr:last-child td.num').first().textContent(),
    gb(shorter.per_gpu_bytes.total),
  );
  assert.deepEqual(
    await widget.locator('[data-out="activations"] tbody td.num').allTextContents(),
    shorter.activations.terms.map((term) => gb(term.bytes)),
  );

  // Update latency is a benchmark (scripts/bench/bench-page.mjs, BENCHMARKS.md), never asserted here.

  await screenshot(widget, 'memory-desktop');
  assert.deepEqual(errors(page), []);
});

test('memory budget: empty, negative, non-numeric and absurd values get a message beside the field', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  const verdict = widget.locator('[data-out="verdict"]');

  for (const [name, value, pattern] of [
    ['gpus', '', /empty/],
    ['gpus', '-8', /gpus/],
    ['gpus', 'eight', /must be a number/],
    ['gpus', '1e400', /too large/],
    ['gpus', '1e15', /gpus/],
    ['seq', '0', /seq/],
    ['mbs', '2.5', /micro_batch|integer|whole/],
    ['tp', '3', /tp|divide/],
  ]) {
    await setControl(widget, name, value);
    const field = await fieldError(widget, name === 'tp' && value === '3' ? 'tp' : name);
    const anyError = field || (await widget.locator('.field .error').allTextContents()).join(' ');
    assert.match(anyError, pattern, `${name}=${JSON.stringify(value)} -> "${anyError}"`);
    // No stale result: the error takes the verdict's place.
    assert.match(await verdict.textContent(), /^No result: /, 'no stale result is left on screen');
    assert.match(await verdict.textContent(), pattern);
    await setControl(widget, name, { gpus: '1', seq: '4096', mbs: '1', tp: '1' }[name]);
    assert.equal(await fieldError(widget, name), '');
  }
  // A malformed config.json is reported beside the text box, with the parse position.
  await setControl(widget, 'model', 'custom');
  await setControl(widget, 'config', '{"model_type": "llama", "hidden_size": ');
  assert.match(await fieldError(widget, 'config'), /.+/);
  assert.deepEqual(errors(page), []);
});

test('memory budget: a pasted Hugging Face config.json gives the same budget as the native engine', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  // Mistral 7B's published config.json fields (huggingface.co/mistralai/Mistral-7B-v0.1, config.json).
  const config = JSON.stringify({
    model_type: 'mistral',
    vocab_size: 32000,
    hidden_size: 4096,
    intermediate_size: 14336,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    max_position_embeddings: 32768,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
    hidden_act: 'silu',
  });
  await setControl(widget, 'model', 'custom');
  await setControl(widget, 'config', config);
  const shown = await widget.evaluate((el) => el.budget);
  const expected = native('memory_budget', { ...(await widget.evaluate((el) => el.budgetArgs)) });
  assert.deepEqual(shown, expected);
  assert.equal(
    shown.params_total,
    native('params', { model: 'mistral-7b' }).total,
    'the pasted config counts like the preset',
  );
  assert.deepEqual(errors(page), []);
});

test('memory budget: a pasted T5 config takes a target length; a decoder refuses one beside the field', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  // google-t5/t5-small's config.json (the fields that matter): 6 + 6 layers, inputs 512, targets 114.
  const config = JSON.stringify(JSON.parse(hfFixture('t5-small')));
  await setControl(widget, 'model', 'custom');
  await setControl(widget, 'config', config);
  await setControl(widget, 'seq', '512');
  const same = await widget.evaluate((el) => el.budget);
  await setControl(widget, 'dseq', '114');
  const args = await widget.evaluate((el) => el.budgetArgs);
  assert.equal(args.decoder_seq, 114);
  const shown = await widget.evaluate((el) => el.budget);
  assert.deepEqual(shown, native('memory_budget', args));
  assert.ok(shown.per_gpu_bytes.activations < same.per_gpu_bytes.activations, 'shorter targets, fewer activations');
  await setControl(widget, 'model', 'llama-3-8b');
  assert.match(await fieldError(widget, 'dseq'), /encoder-decoder/);
  assert.deepEqual(errors(page), []);
});

test('memory budget: settings round-trip through the URL and hostile URL values are ignored with a notice', async (t) => {
  const { site, page } = await sitePage(t);
  let dialogs = 0;
  page.on('dialog', async (dialog) => {
    dialogs++;
    await dialog.dismiss();
  });
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  const key = await widget.evaluate((el) => el.key);
  await setControl(widget, 'gpus', '16');
  await setControl(widget, 'zero', '3');
  await page.waitForFunction((k) => location.search.includes(`${k}.zero=3`), key);
  const link = page.url();
  assert.deepEqual(errors(page), [], 'no errors while the settings are set');

  // The link opens in a new tab (in this one it would only move to #memory); the links after it are new
  // documents in that tab (reopen clears the errors, so each load's are checked).
  const again = await site.newPage(DESKTOP);
  again.on('dialog', async (dialog) => {
    dialogs++;
    await dialog.dismiss();
  });
  await open(site, again, link.replace(site.url, '/'));
  const restored = again.locator('section#memory tally-memory-budget');
  assert.equal(await restored.locator('[name="gpus"]').inputValue(), '16');
  assert.equal(await restored.locator('[name="zero"]').inputValue(), '3');

  const hostile =
    `/?${key}.gpus=${encodeURIComponent('<img src=x onerror=alert(1)>')}&${key}.model=${encodeURIComponent('"><script>alert(2)</script>')}` +
    `&${key}.seq=-5&${key}.evil=1&nosuch1.gpus=2#memory`;
  assert.deepEqual(errors(again), [], 'no errors on the round-tripped link');
  const bad = again;
  await reopen(site, bad, hostile);
  await bad.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await mountAll(bad);
  const w = bad.locator('section#memory tally-memory-budget');
  const notice = await w.locator('.url-notice').textContent();
  for (const param of [`${key}.gpus`, `${key}.model`, `${key}.seq`, `${key}.evil`])
    assert.ok(notice.includes(param), `${param} in "${notice}"`);
  assert.match(await bad.locator('#page-notice').textContent(), /nosuch1\.gpus/);
  assert.equal(await w.locator('img').count(), 0, 'no markup from the URL');
  assert.equal(await w.locator('script').count(), 0);
  assert.match(
    await w.locator('[data-out="verdict"]').textContent(),
    /^(Fits|Does not fit)/,
    'the widget still works on its defaults',
  );
  assert.equal(dialogs, 0);

  // A pasted config in the URL that the engine rejects falls back to the page's preset, with a notice.
  assert.deepEqual(errors(bad), [], 'no errors on the hostile link');
  const badConfig = again;
  await reopen(
    site,
    badConfig,
    `/?${key}.model=custom&${key}.config=${encodeURIComponent('{"model_type":"llama","hidden_size":-1}')}#memory`,
  );
  const c = badConfig.locator('section#memory tally-memory-budget');
  assert.match(await c.locator('.url-notice').textContent(), new RegExp(`${key}\\.config`));
  assert.equal(await c.locator('[name="model"]').inputValue(), 'llama-2-7b');
  assert.match(await c.locator('[data-out="verdict"]').textContent(), /^(Fits|Does not fit)/);
});

test('memory budget: exports a Markdown table, JSON, an SVG and a PNG; phone layout screenshot', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const context = await site.browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.url });
  const page = await context.newPage();
  const pageErrs = [];
  page.on('pageerror', (e) => pageErrs.push(e.message));
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  const budget = await widget.evaluate((el) => el.budget);

  await widget.locator('button[data-action="markdown"]').click();
  const markdown = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(markdown, /\| term \| per GPU \(GB\) \| bytes \| share \|/);
  assert.ok(markdown.includes(`| ${budget.per_gpu_bytes.total} |`), 'exact byte total in the table');
  await widget.locator('button[data-action="json"]').click();
  const json = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.deepEqual(json.result, budget);

  const [svgDownload] = await Promise.all([
    page.waitForEvent('download'),
    widget.locator('button[data-action="svg"]').click(),
  ]);
  const svgText = await streamText(await svgDownload.createReadStream());
  assert.match(svgText, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svgText, /memory per GPU \(GB = 10⁹ bytes\)/);
  const [pngDownload] = await Promise.all([
    page.waitForEvent('download'),
    widget.locator('button[data-action="png"]').click(),
  ]);
  const png = await streamBuffer(await pngDownload.createReadStream());
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
  await context.close();

  const phone = await site.newPage(PHONE);
  await open(site, phone, '/#memory');
  const small = phone.locator('section#memory tally-memory-budget');
  await small.scrollIntoViewIfNeeded();
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling on a 375 px phone (overflow ${overflow}px)`);
  await screenshot(small, 'memory-phone');
  assert.deepEqual([...pageErrs, ...errors(phone)], []);
});

async function streamBuffer(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}
async function streamText(stream) {
  return (await streamBuffer(stream)).toString('utf8');
}

test('memory budget: dropout defaults to the model (Llama 3 8B at 8,192 tokens: 178 GB of activations, not 387 GB) and the reader can change it and the allowance', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#activations');
  const widget = page.locator('section#activations tally-memory-budget');
  assert.equal(await widget.locator('[name="dropout"]').inputValue(), 'model');
  assert.equal(await widget.locator('[name="dropout"] option').first().textContent(), 'as the model: none');
  const row = (id) => widget.locator(`tr[data-term="${id}"] td.num`).first().textContent();
  const base = {
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    recipe: 'bf16_mixed_adamw',
    seq: 8192,
    micro_batch: 1,
    gpus: 1,
    zero: 0,
    tp: 1,
    pp: 1,
    recompute: 'none',
    flash_attention: false,
    sequence_parallel: false,
  };
  const none = native('memory_budget', base);
  assert.equal(none.per_gpu_bytes.activations, 178283085824, 'no masks: the engine without dropout');
  assert.equal(await row('activations'), '178 GB');
  // The per-layer table lists no dropout mask for a model trained without dropout.
  const terms = await widget.locator('[data-out="activations"] tbody td:first-child').allTextContents();
  assert.ok(terms.length > 5 && terms.every((t) => !/dropout/i.test(t)), terms.join(' | '));
  await setControl(widget, 'dropout', 'true');
  assert.equal(
    await row('activations'),
    gb(native('memory_budget', { ...base, dropout: true }).per_gpu_bytes.activations),
  );
  assert.equal(await row('activations'), '387 GB');
  assert.ok((await widget.locator('[data-out="activations"] tbody').textContent()).includes('dropout mask'));
  // The allowance: no reserve leaves the whole reported capacity (81,559 MiB) usable.
  await setControl(widget, 'context_mib', '0');
  await setControl(widget, 'frag_pct', '0');
  const budget = await widget.evaluate((el) => el.budget);
  assert.equal(budget.usable_bytes, 81559 * 2 ** 20);
  assert.match(await widget.locator('[data-out="verdict"]').textContent(), /85\.5 GB the device reports/);
  await setControl(widget, 'frag_pct', '90');
  assert.match(await fieldError(widget, 'frag_pct'), /fragmentation_fraction must be in \[0, 0\.5\]/);
  // The dropout choice round-trips through the URL like the other fields.
  await setControl(widget, 'frag_pct', '5');
  await page.waitForFunction(() => /dropout=true/.test(decodeURIComponent(location.search + location.hash)));
  const again = await site.newPage(DESKTOP);
  await open(site, again, page.url().replace(/^https?:\/\/[^/]+/, ''));
  assert.equal(await again.locator('section#activations tally-memory-budget [name="dropout"]').inputValue(), 'true');
  assert.deepEqual([...errors(page), ...errors(again)], []);
});

test('memory: the dashed line is labelled usable at 375 px as at 1280 px (it is the usable bytes, not the capacity)', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const labels = {};
  for (const [name, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ]) {
    const page = await site.newPage(viewport);
    await open(site, page, '/#memory');
    const widget = page.locator('section#memory tally-memory-budget');
    await widget.evaluate((el) => el.ready);
    await widget.scrollIntoViewIfNeeded();
    const usable = await widget.evaluate((el) => el.budget.usable_bytes);
    labels[name] = { text: await widget.locator('svg text.cap-label').textContent(), usable: gb(usable) };
    assert.deepEqual(errors(page), []);
  }
  assert.equal(labels.phone.text, `usable: ${labels.phone.usable}`);
  assert.match(labels.desktop.text, new RegExp(`usable: ${labels.desktop.usable}$`));
});
