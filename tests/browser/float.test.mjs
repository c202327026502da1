// The float-format bit explorer in a real browser: typed numbers, clicked bits and bad input, with every code
// checked against the native engine, and screenshots for the README (desktop and a 375px phone).
import test from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, PHONE, sitePage } from './harness.mjs';
import { native, commit } from './page-helpers.mjs';
import { FLOAT_FORMATS } from '../node/engine.mjs';

async function openFloat(site, page, query = '') {
  await page.goto(new URL(`/${query}`, site.url).href);
  const widget = page.locator('tally-float').first();
  await widget.scrollIntoViewIfNeeded(); // it mounts as the reader comes near it (web/widgets/kit/mount.js)
  await widget.locator('.bits button').first().waitFor({ timeout: 20000 });
  return widget;
}

/** The compare table as {format: {hex, exact, note}}. */
async function compareTable(widget) {
  return widget.locator('[data-out="compare"] tbody tr').evaluateAll((rows) =>
    Object.fromEntries(
      rows.map((r) => {
        const c = r.querySelectorAll('td');
        return [c[0].textContent, { hex: c[1].textContent, exact: c[2].getAttribute('title'), note: c[4].textContent }];
      }),
    ),
  );
}

async function typeValue(widget, format, value) {
  await widget.locator('select[name="format"]').selectOption(format);
  await commit(widget.locator('input[name="value"]'), value);
}

test("typing 1e-8, 500 and 0.1 shows the engine's codes in every format; bits flip on click", async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openFloat(site, page);
  await widget.scrollIntoViewIfNeeded();

  // 1e-8 vanishes in fp16 but survives in bf16.
  await typeValue(widget, 'fp16', '1e-8');
  let table = await compareTable(widget);
  for (const format of ['fp16', 'bf16', 'e4m3', 'fp32', 'e8m0']) {
    const n = native('float_encode', { format, value: '1e-8' });
    assert.equal(table[format].hex, n.hex, format);
    assert.equal(table[format].exact, n.exact, format);
  }
  assert.equal(table.fp16.hex, '0x0000');
  assert.match(table.fp16.note, /underflowed to 0/);
  assert.equal(table.bf16.hex, '0x322c');
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x0000');
  assert.match(await widget.locator('[data-out="flags"]').textContent(), /underflowed to 0/);

  // 500 saturates to 448 in E4M3 (and becomes NaN without saturation).
  await typeValue(widget, 'e4m3', '500');
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x7e');
  assert.match(await widget.locator('[data-out="stored"]').textContent(), /e4m3 0x7e = 448$/);
  assert.match(await widget.locator('[data-out="flags"]').textContent(), /overflowed: saturated to \+max/);
  assert.equal(
    await widget.locator('[data-out="formula"]').textContent(),
    native('float_encode', { format: 'e4m3', value: '500' }).formula,
  );
  assert.equal((await widget.locator('.bits button').allTextContents()).join(''), '01111110');
  table = await compareTable(widget);
  assert.match(table.e4m3.note, /overflowed: saturated to \+max/);
  assert.equal(table.e5m2.hex, native('float_encode', { format: 'e5m2', value: '500' }).hex);
  await widget.locator('select[name="saturate"]').selectOption('false');
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x7f');
  assert.match(await widget.locator('[data-out="flags"]').textContent(), /overflowed to NaN/);
  await widget.locator('select[name="saturate"]').selectOption('default');

  // Click the sign bit: 448 -> -448.
  await widget.locator('.bits button[data-bit="7"]').click();
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0xfe');
  assert.match(await widget.locator('[data-out="stored"]').textContent(), /= -448$/);
  // Click the lowest mantissa bit: -448 (0xfe) -> 0xff, E4M3's NaN.
  await widget.locator('.bits button[data-bit="0"]').click();
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0xff');
  assert.equal(
    await widget.locator('[data-out="formula"]').textContent(),
    native('float_decode', { format: 'e4m3', hex: '0xff' }).formula,
  );
  await screenshot(widget, 'float-e4m3-bits');

  // 0.1 in fp16 is 0x2e66 = 0.0999755859375; step to the next value and back.
  await typeValue(widget, 'fp16', '0.1');
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x2e66');
  table = await compareTable(widget);
  for (const format of FLOAT_FORMATS) {
    const n = native('float_encode', { format, value: '0.1' });
    assert.equal(table[format].hex, n.hex, format);
    assert.equal(table[format].exact, n.exact, format);
  }
  assert.equal(table.fp16.exact, '0.0999755859375');
  await widget.locator('[data-step="next"]').click();
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x2e67');
  await widget.locator('[data-step="prev"]').click();
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x2e66');
  await widget.locator('[data-jump="max"]').click();
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x7bff');
  assert.match(await widget.locator('[data-out="stored"]').textContent(), /= 65504$/);

  // The state is in the URL: reloading it restores the same bits.
  await page.waitForFunction(() =>
    [...new URLSearchParams(location.search)].some(([k, v]) => k.endsWith('.hex') && v === '0x7bff'),
  );
  const url = page.url();
  const again = await site.newPage();
  const restored = await openFloat(site, again, new URL(url).search);
  assert.equal(await restored.locator('input[name="hex"]').inputValue(), '0x7bff');
  assert.equal(await restored.locator('select[name="format"]').inputValue(), 'fp16');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
});

test('bad input shows a message beside the field and nothing throws', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openFloat(site, page);
  const error = (name) => widget.locator(`.field[data-field="${name}"] .error`).textContent();

  await typeValue(widget, 'e4m3', '');
  assert.match(await error('value'), /value is empty/);
  await commit(widget.locator('input[name="value"]'), 'abc');
  assert.match(await error('value'), /value must be a number .*"abc"/);
  assert.equal(await widget.locator('[data-out="stored"]').textContent(), '—');
  await commit(widget.locator('input[name="value"]'), '2');
  assert.equal(await error('value'), '');
  await commit(widget.locator('input[name="hex"]'), '0x1234');
  assert.match(await error('hex'), /too long: expected a hex code of at most 2 digits for e4m3/);
  await commit(widget.locator('input[name="hex"]'), '');
  assert.match(await error('hex'), /hex is empty/);
  await commit(widget.locator('input[name="hex"]'), '0x38');
  assert.match(await widget.locator('[data-out="stored"]').textContent(), /= 1$/);
  await widget.locator('input[name="flip_bit"]').fill('8');
  await widget.locator('[data-action="flip"]').click();
  assert.match(await error('flip_bit'), /flip_bit must be a bit index in \[0, 7\] for e4m3/);
  await widget.locator('input[name="flip_bit"]').fill('6');
  await widget.locator('[data-action="flip"]').click();
  assert.equal(await error('flip_bit'), '');
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x78');

  // Block panel: a bad number names its position.
  await commit(widget.locator('textarea[name="block"]'), '1, 2, abc');
  assert.match(await error('block'), /values\[2\] must be a number/);
  await commit(widget.locator('textarea[name="block"]'), '');
  assert.equal(await error('block'), '');
  assert.deepEqual(page.errors, []);

  // The JS API reports the same errors with their field.
  const apiErrors = await page.evaluate(async () => {
    const { getEngine } = await import('./engine.js');
    const engine = await getEngine();
    const out = [];
    for (const args of [
      { format: 'e4m3', value: '' },
      { format: 'e4m3', value: 'abc' },
    ]) {
      try {
        engine.call('float_encode', args);
      } catch (e) {
        out.push([e.name, e.field]);
      }
    }
    for (const args of [
      { format: 'e4m3', hex: '0x1234' },
      { format: 'e4m3', hex: '0x7e', flip_bit: 8 },
    ]) {
      try {
        engine.call('float_decode', args);
      } catch (e) {
        out.push([e.name, e.field]);
      }
    }
    return out;
  });
  assert.deepEqual(apiErrors, [
    ['TallyError', 'value'],
    ['TallyError', 'value'],
    ['TallyError', 'hex'],
    ['TallyError', 'flip_bit'],
  ]);
});

test('the block panel quantizes the generated vector exactly as the native engine does; screenshots', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openFloat(site, page, '?float1.format=e4m3&float1.value=500');
  await widget.scrollIntoViewIfNeeded();
  const n = native('block_compare', {
    schemes: ['mxfp4', 'nvfp4', 'fp8_tensor', 'mxfp8_e4m3'],
    generate: { n: 64, seed: '1', outlier: '40' },
  });
  const rows = await widget
    .locator('[data-out="blocks"] tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.dataset.scheme, tr.querySelectorAll('td')[4].textContent]));
  assert.deepEqual(
    rows.map((r) => r[0]),
    ['mxfp4', 'nvfp4', 'fp8_tensor', 'mxfp8_e4m3'],
  );
  rows.forEach(([, zeroed], i) => assert.equal(zeroed, `${n.results[i].zeroed} of 64`));
  assert.equal(await widget.locator('input[name="hex"]').inputValue(), '0x7e');
  await screenshot(widget, 'float-desktop');

  const phone = await site.newPage(PHONE);
  const small = await openFloat(site, phone, '?float1.format=fp16&float1.value=1e-8');
  await small.scrollIntoViewIfNeeded();
  assert.equal(await small.locator('input[name="hex"]').inputValue(), '0x0000');
  // Nothing in the widget is wider than the phone's screen.
  const overflow = await small.evaluate((el) => el.scrollWidth - el.clientWidth);
  assert.ok(overflow <= 1, `widget overflows the phone width by ${overflow}px`);
  await screenshot(small, 'float-phone');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(phone.errors, []);
});

test('at 375 px every bit pattern in the compare table stays on one line (a hex code is one token)', async (t) => {
  const { site, page } = await sitePage(t, PHONE);
  const widget = await openFloat(site, page);
  await typeValue(widget, 'fp32', '0.1');
  await widget.locator('[data-out="compare"]').scrollIntoViewIfNeeded();
  const cells = await widget.locator('[data-out="compare"] tbody td.hex').evaluateAll((tds) =>
    tds.map((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      return { hex: td.textContent, lines: tops.size };
    }),
  );
  assert.ok(cells.length >= 5, `${cells.length} formats compared`);
  assert.ok(
    cells.some((c) => c.hex.length >= 10),
    'a long code among them (fp32 0x3dcccccd)',
  );
  assert.deepEqual(
    cells.filter((c) => c.lines !== 1),
    [],
  );
});

test('every format the widget offers is introduced in the prose of chapter 2', async (t) => {
  const { site, page } = await sitePage(t, PHONE);
  const widget = await openFloat(site, page);
  const offered = await widget.locator('select[name="format"] option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(offered.length >= 10, `${offered.length} formats offered`);
  // The chapter's own text, outside the widget and its table: where a reader learns what a format is.
  const prose = await page.evaluate(() =>
    [...document.querySelectorAll('section#formats p, section#formats li')].map((p) => p.textContent).join(' '),
  );
  const named = (name) => new RegExp(`\\b${name}\\b`, 'i').test(prose);
  assert.deepEqual(
    offered.filter((name) => !named(name)),
    [],
  );
});
