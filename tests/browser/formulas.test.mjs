// What a reader reads beside the numbers: every symbol in a shown formula is defined where it is shown,
// the per-token table shows per-token formulas, recipe bytes are readable and their fraction explained,
// the float explorer says what happened to every value truthfully, numbers can be typed as people write
// them ("70B", "40%"), unfinished typing is not an error, and the exported PNG carries a legend.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sitePage } from './harness.mjs';
import { native, open, setControl, commit, fieldError, errors, watch } from './page-helpers.mjs';

/** Symbols a reader cannot read as words: one or two letters, or a letter with a subscript. */
const symbolsOf = (formula) =>
  [...new Set(formula.match(/Σ_[A-Za-z]+|[A-Za-z]+(?:_[A-Za-z0-9]+)?/g) ?? [])].filter(
    (s) => s.length <= 2 || s.includes('_'),
  );
/** How a symbol reads on the page: "N_w" is N with a subscript w (text "Nw"); "per_layer" reads "per-layer". */
const shownAs = (symbol) =>
  /^[A-Za-z]{2,}_[A-Za-z]{2,}$/.test(symbol) ? symbol.replace('_', '-') : symbol.replace(/_/g, '');

test('memory: every symbol of every formula (terms and per-layer activations) is defined beside it', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  await widget.locator('details[data-out="activations"] summary').click();
  for (const settings of [
    {},
    { recipe: 'bf16_mixed_adamw_8bit' },
    { recipe: 'bf16_mixed_adafactor' },
    { model: 'mixtral-8x7b', gpus: '8', tp: '2', pp: '2', sp: true },
    { model: 'gpt2-small', recompute: 'full' },
  ]) {
    for (const [name, value] of Object.entries(settings)) await setControl(widget, name, value);
    const budget = await widget.evaluate((el) => el.budget);
    assert.ok(budget, JSON.stringify(settings));
    for (const cls of budget.classes) {
      await widget.locator(`button.formula-btn[data-term="${cls.id}"]`).click();
      const box = widget.locator('[data-out="formula"]');
      const where = await box.locator('[data-out="symbols"]').textContent();
      for (const symbol of symbolsOf(cls.formula))
        assert.match(
          where,
          new RegExp(`(^where |; )${shownAs(symbol)} = \\S`),
          `${JSON.stringify(settings)} ${cls.id}: "${cls.formula}" defines ${symbol} (got "${where}")`,
        );
      assert.doesNotMatch(
        await box.locator('.formula').first().textContent(),
        /perlayer|inflight/,
        'word identifiers read as words',
      );
    }
    const legend = await widget.locator('[data-out="act-symbols"]').textContent();
    for (const term of budget.activations.terms)
      for (const symbol of symbolsOf(term.formula))
        assert.match(
          legend,
          new RegExp(`(^where |; )${shownAs(symbol)} = \\S`),
          `${term.id}: "${term.formula}" defines ${symbol}`,
        );
  }
  assert.deepEqual(errors(page), []);
});

test('compute: the per-token table shows per-token formulas, each symbol defined, matching the engine', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await open(site, page, '/#flops');
  const widget = page.locator('section#flops tally-compute');
  for (const model of ['llama-3-8b', 'mixtral-8x7b']) {
    await setControl(widget, 'model', model);
    const seq = await widget.locator('[name="seq"]').inputValue();
    const expected = native('flops', {
      model,
      seq: Number(seq),
      tokens: Number(await widget.locator('[name="tokens"]').inputValue()),
    });
    await widget.locator('details[data-out="components"] summary').click();
    const shown = await widget.locator('details[data-out="components"] tbody td.formula').allTextContents();
    assert.deepEqual(
      shown,
      expected.components.map((c) => c.formula_per_token.replace(/_/g, '')),
    );
    for (const formula of shown) assert.doesNotMatch(formula, /s²|s\(s/, `"${formula}" is a per-sequence formula`);
    const where = await widget.locator('[data-out="symbols"]').textContent();
    for (const c of expected.components)
      for (const symbol of symbolsOf(c.formula_per_token))
        assert.match(where, new RegExp(`(^where |; )${shownAs(symbol)} = \\S`), `${model}: ${symbol}`);
    await widget.locator('details[data-out="components"] summary').click();
  }
  assert.deepEqual(errors(page), []);
});

test('numbers typed as people write them: 70B, 15T and 40% are read; bad text names the field and range', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await open(site, page, '/#time');
  const widget = page.locator('section#time tally-compute');
  for (const [name, value] of [
    ['model', 'custom'],
    ['hardware', 'h100-sxm'],
    ['params', '70B'],
    ['tokens', '15T'],
    ['gpus', '1,024'],
    ['mfu', '40%'],
    ['price', '2'],
  ])
    await setControl(widget, name, value);
  assert.deepEqual((await widget.locator('.field .error').allTextContents()).filter(Boolean), []);
  const expected = native('training_cost', {
    params: 70e9,
    tokens: 15e12,
    gpus: 1024,
    mfu: 0.4,
    hardware: 'h100-sxm',
    dtype: 'bf16',
    dollars_per_gpu_hour: 2,
  });
  assert.equal(
    await widget.locator('[data-out="days"]').textContent(),
    Number((expected.seconds / 86400).toPrecision(5)).toLocaleString('en-US'),
  );
  await setControl(widget, 'mfu', 'forty');
  assert.match(
    await fieldError(widget, 'mfu'),
    /^MFU \(0–1\] must be a number in \(0, 1\] \(like 0\.4 or 40%\), got "forty"$/,
  );
  await setControl(widget, 'params', '70%');
  assert.match(
    await fieldError(widget, 'params'),
    /Parameters N must be a number .*"70%"/,
    'percent only where the field is a fraction',
  );
  assert.deepEqual(errors(page), []);
});

test('typing "0." or "1e" on the way to a number shows no error; the error waits until the reader leaves the field', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await open(site, page, '/#time');
  const widget = page.locator('section#time tally-compute');
  const mfu = widget.locator('[name="mfu"]');
  await mfu.fill('');
  for (const key of ['0', '.']) {
    await mfu.press(key);
    assert.equal(await fieldError(widget, 'mfu'), '', `after typing "${await mfu.inputValue()}"`);
  }
  await page.waitForTimeout(1000);
  assert.equal(await fieldError(widget, 'mfu'), '', '"0." is unfinished: no error even after a pause');
  await mfu.press('4');
  assert.equal(await fieldError(widget, 'mfu'), '');
  assert.notEqual(await widget.locator('[data-out="days"]').textContent(), '—');
  await mfu.fill('0.');
  await mfu.press('Tab');
  assert.match(
    await fieldError(widget, 'mfu'),
    /mfu must be in \(0, 1\]/,
    'leaving the field with "0." shows the error',
  );
  // A finished but wrong number shows its error after a short pause without leaving the field.
  await mfu.focus();
  await mfu.fill('1.5');
  await page.waitForFunction(
    () =>
      document.querySelector('section#time tally-compute').shadowRoot.querySelector('.field[data-field="mfu"] .error')
        .textContent !== '',
    null,
    { timeout: 3000 },
  );
  assert.deepEqual(errors(page), []);
});

test('float: "what happened" is never blank and is true: rounded, saturated inf, E8M0 has no zero', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await page.goto(new URL('/#formats', site.url).href);
  const widget = page.locator('tally-float').first();
  await widget.scrollIntoViewIfNeeded(); // it mounts as the reader comes near it (web/widgets/kit/mount.js)
  await widget.locator('[data-out="compare"] tbody tr').first().waitFor();
  const value = widget.locator('input[name="value"]');
  const table = async () =>
    Object.fromEntries(
      await widget
        .locator('[data-out="compare"] tbody tr')
        .evaluateAll((rows) => rows.map((r) => [r.dataset.format, r.lastElementChild.textContent])),
    );
  for (const input of ['0.1', '3.140625', '1e-8', '500', 'inf', '0', '1e6']) {
    await commit(value, input);
    const notes = await table();
    for (const [format, note] of Object.entries(notes)) assert.notEqual(note.trim(), '', `${input} in ${format}`);
  }
  await commit(value, '0.1');
  assert.match((await table()).bf16, /^rounded \(nearest, ties to even\)/);
  await commit(value, 'inf');
  const inf = await table();
  assert.match(inf.e4m3, /no infinity in e4m3: saturated to \+max \(448\)/);
  assert.doesNotMatch(inf.e4m3, /exact/);
  await widget.locator('select[name="format"]').selectOption('e4m3');
  await commit(value, 'inf');
  const flags = await widget.locator('[data-out="flags"]').textContent();
  assert.match(flags, /saturated/);
  assert.doesNotMatch(flags, /exact/);
  await widget.locator('select[name="format"]').selectOption('e8m0');
  await commit(value, '0');
  const e8m0 = await widget.locator('[data-out="flags"]').textContent();
  assert.doesNotMatch(e8m0, /underflowed to zero/, 'E8M0 cannot store zero');
  assert.match(e8m0, /no zero in e8m0: stored 2\^-127/);
  assert.match(await widget.locator('[data-out="stored"]').textContent(), /^e8m0 0x00 = 0\.0000/);
  assert.deepEqual(errors(page), []);
});

test("recipes: bytes per parameter print rounded, and a fraction such as 8-bit AdamW's 1/256 is explained", async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await page.goto(new URL('/#memory', site.url).href);
  await page.waitForFunction(() => document.querySelector('tally-recipes')?.dataset.state === 'ok');
  const text = await page.locator('tally-recipes').textContent();
  assert.doesNotMatch(text, /\d\.\d{4,}/, 'no long binary fractions such as 2.00390625');
  const row = await page.locator('tally-recipes tr', { hasText: '8-bit AdamW' }).allTextContents();
  assert.match(row[0], /2\.004\* \(adamw_8bit, int8\)/);
  assert.match(row[0], /10\.004\*/);
  const note = await page.locator('tally-recipes .recipe-note').allTextContents();
  assert.equal(note.length, 1);
  assert.match(
    note[0],
    /8-bit AdamW: the optimizer states take 2 \+ 1\/256 bytes per parameter .*blocks of 2048 with an fp32 absmax/,
  );
  assert.equal(
    native('memory_budget', { model: 'gpt2-small', recipe: 'bf16_mixed_adamw_8bit', seq: 1 }).bytes_per_param
      .optimizer_states,
    2 + 1 / 256,
  );
  assert.deepEqual(errors(page), []);
});

test('memory: the exported SVG and PNG carry a legend naming every coloured term with its bytes', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  const { svg, rows, chartHeight } = await widget.evaluate((el) => ({
    svg: el.svgText(),
    rows: el
      .rows()
      .filter((r) => r.bytes > 0)
      .map((r) => ({ name: r.name, color: r.color })),
    chartHeight: el.shadowRoot.querySelector('[data-out="chart"]').viewBox.baseVal.height,
  }));
  for (const r of rows) {
    assert.match(svg, new RegExp(`<text[^>]*>${r.name}: [\\d.,]+ [GM]B</text>`), r.name);
    assert.ok(svg.includes(`fill="${r.color}"`), `swatch for ${r.name}`);
  }
  const svgHeight = Number(/viewBox="[\d.]+ [\d.]+ [\d.]+ ([\d.]+)"/.exec(svg)[1]);
  assert.ok(svgHeight > chartHeight + 30, 'the legend adds room below the chart');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    widget.locator('button[data-action="png"]').click(),
  ]);
  const png = readFileSync(await download.path());
  assert.equal(png.readUInt32BE(20), Math.round(svgHeight * 2), 'the PNG (2x) is as tall as the chart with its legend');
  assert.equal(
    await widget.evaluate((el) => el.shadowRoot.querySelector('[data-out="chart"] .legend')),
    null,
    'the page chart is left as it was',
  );
  assert.deepEqual(errors(page), []);
});
