// The page's URL state, generated from the widgets' own declarations: every declared state field has an attribute
// that sets it after start-up, and every value a link gives either shows in the widget's state or gets a notice
// naming its parameter (no value is dropped silently), with no blank widget and no NaN or Infinity in a chart.
// Then the reproductions of issue 21 (item 5), each checked on its own.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite } from './harness.mjs';
import { errors, open, reopen, setControl, mountAll } from './page-helpers.mjs';

const WIDGETS =
  'tally-compute, tally-memory-budget, tally-float, tally-step, tally-roofline, tally-inference, tally-collectives';

/** Number texts a reader or a hostile link may give: plain, suffixed, grouped, percent, extremes, junk. */
const NUMBER_TEXTS = ['1', '2', '0', '-1', '0.5', '70B', '1,024', '40%', '1e308', '5e-324', '1073741824', 'abc', ''];
/** Free-text fields (a float's value or hex, a block, a pasted config): numbers, extremes, hex, JSON, junk. */
const FREE_TEXTS = ['1', '-0', '1e300', '0x3f80', '1, 2, 1e300', '{"model_type": "llama"}', 'abc', ''];

/** Opens `path` on a fresh page (or again in `page`) and waits until every widget on it is wired (web/app.js). */
async function load(site, path, page = null) {
  if (page) await reopen(site, page, path);
  else {
    page = await site.newPage();
    await open(site, page, path);
  }
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await mountAll(page);
  return page;
}

/** Per widget: its key, state, URL notice, engine error, and whether a chart holds NaN or Infinity. */
function inspect(page) {
  return page.evaluate((selector) => {
    const out = {};
    for (const el of document.querySelectorAll(selector)) {
      const root = el.shadowRoot;
      const badSvg = [...root.querySelectorAll('svg, svg *')].some((node) =>
        [...node.attributes].some((a) => /NaN|Infinity/.test(a.value)),
      );
      const svgText = [...root.querySelectorAll('svg text')].map((t) => t.textContent).join(' ');
      out[el.key] = {
        tag: el.localName,
        state: el.getState(),
        notice: root.querySelector('.url-notice')?.textContent ?? '',
        error: el.lastError,
        badChart: badSvg || /NaN|Infinity/.test(svgText),
      };
    }
    return out;
  }, WIDGETS);
}

/** The candidate texts of one declared field: every accepted choice and one more, or number or free texts. */
function candidates(field) {
  if (field.allowed) return [...field.allowed, 'not-a-choice'];
  if (field.number) return NUMBER_TEXTS;
  return [field.fallback, ...FREE_TEXTS];
}

test('URL state: declared from the widgets, every field is an observed attribute and every link value shows or is named in a notice', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const first = await load(site, '/');
  const declared = await first.evaluate((selector) => {
    return [...document.querySelectorAll(selector)].map((el) => ({
      key: el.key,
      tag: el.localName,
      observed: el.constructor.observedAttributes,
      fields: el.stateFields.map((f) => ({
        name: f.name,
        attribute: f.attribute ?? f.name.replace(/_/g, '-'),
        allowed: f.check.allowed ?? null,
        number: f.check.kind === 'number',
        fallback: f.fallback,
      })),
    }));
  }, WIDGETS);
  assert.deepEqual(
    [...new Set(declared.map((w) => w.tag))].sort(),
    WIDGETS.split(', ').sort(),
    'every widget is on the page',
  );

  // An attribute set after start-up changes the state (attributeChangedCallback): each declared field needs one.
  for (const widget of declared)
    for (const field of widget.fields)
      assert.ok(
        widget.observed.includes(field.attribute),
        `<${widget.tag}> declares state field ${field.name} but does not observe attribute ${field.attribute}`,
      );

  // Round r gives every field of every widget its r-th candidate (cycling), all in one link: whatever mix of good,
  // bad and conflicting values a link holds, each one either shows or is named. Each link is a fresh load of the
  // page in the same tab (reopen), so only the first load is cold.
  const rounds = Math.max(...declared.flatMap((w) => w.fields.map((f) => candidates(f).length)));
  for (let round = 0; round < rounds; round++) {
    const query = new URLSearchParams();
    const given = [];
    for (const widget of declared)
      for (const field of widget.fields) {
        const list = candidates(field);
        const text = list[round % list.length];
        query.set(`${widget.key}.${field.name}`, text);
        given.push({ key: widget.key, field: field.name, text });
      }
    const page = await load(site, `/?${query}`, first);
    const seen = await inspect(page);
    for (const { key, field, text } of given) {
      const param = `${key}.${field}`;
      const { state, notice } = seen[key];
      const shown = String(state[field] ?? '') === text;
      const named = notice.includes(`${param} (`);
      const what = `${param}=${JSON.stringify(text)}: shows "${state[field]}", notice "${notice}"`;
      assert.ok(shown || named, `dropped silently: ${what}`);
      // A value the state holds is never also reported as ignored (an absent field reads as empty).
      assert.ok(!(named && state[field] !== undefined && shown), `shown but named as ignored: ${what}`);
    }
    for (const [key, widget] of Object.entries(seen)) {
      assert.equal(widget.error, null, `${key} is not left without a result by link ${query}`);
      assert.equal(widget.badChart, false, `${key} draws no NaN or Infinity (link ${query})`);
    }
    assert.deepEqual(errors(page), [], `no console errors (link ${query})`);
  }
  await first.close();
});

test('URL state: the issue 21 links show the value or revert it with a notice naming the parameter', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  // Each link is a fresh load of the page in one tab (reopen: a new document, its errors counted afresh).

  // A parameter count or peak without a preset detaches its field, as typing one does; beside a preset it is named.
  let page = await load(site, '/?cmp1.params=13e9&cmp1.tokens=5e-324&cmp2.peak_tflops=500');
  let seen = await inspect(page);
  assert.equal(seen.cmp1.state.params, '13e9');
  assert.equal(seen.cmp1.state.model, 'custom');
  assert.equal(seen.cmp2.state.peak_tflops, '500');
  assert.equal(seen.cmp2.state.hardware, 'custom');
  // A legal but tiny token count: tick labels sit by exponent, none at -Infinity.
  assert.equal(seen.cmp1.state.tokens, '5e-324');
  assert.equal(seen.cmp1.badChart, false);
  const ticks = await page
    .locator('tally-compute')
    .first()
    .evaluate((el) => [...el.shadowRoot.querySelectorAll('svg text')].map((t) => Number(t.getAttribute('x'))));
  assert.ok(ticks.length > 2 && ticks.length < 40, `a readable number of labels (${ticks.length})`);
  assert.ok(
    ticks.every((x) => Number.isFinite(x) && x >= 0),
    `labels inside the chart: ${ticks}`,
  );
  assert.equal(seen.cmp1.notice, '');

  await load(site, '/?cmp1.model=llama-2-7b&cmp1.params=13e9&cmp2.hardware=a100-80gb&cmp2.peak_tflops=5', page);
  seen = await inspect(page);
  assert.match(seen.cmp1.notice, /cmp1\.params \(the model llama-2-7b sets the parameter count .*cmp1\.model=custom/);
  assert.match(seen.cmp2.notice, /cmp2\.peak_tflops \(the GPU a100-80gb sets the bf16 peak/);

  // An invalid choice of a field whose name holds a digit is named, not ignored unread.
  await load(site, '/?mem1.z3buf=xyz', page);
  seen = await inspect(page);
  assert.equal(seen.mem1.state.z3buf, 'none');
  assert.match(seen.mem1.notice, /mem1\.z3buf \(not one of none, module, layer\)/);

  // Values that make the engine refuse another field go back to the last good value, named, and the figure stays.
  await load(site, '/?cmp2.params=1e308&float1.outlier=1e300&mem1.cf=1.5&mem2.seq=1073741824', page);
  seen = await inspect(page);
  assert.equal(seen.cmp2.state.params, '70e9');
  // The engine names the field at fault itself (issue 21: it used to blame tokens, "below 0").
  assert.match(seen.cmp2.notice, /cmp2\.params \(params must be a parameter count in \[1, 1e\+18\], got 1e\+308\)/);
  assert.notEqual(await page.locator('tally-compute').nth(1).locator('[data-out="days"]').textContent(), '—');
  assert.equal(seen.float1.state.outlier, '40');
  assert.match(
    seen.float1.notice,
    /float1\.outlier \(with it, the engine refused block: .*(not a finite number|overflows or is undefined)/,
  );
  assert.doesNotMatch(seen.float1.notice, /nan/i);
  assert.notEqual(await page.locator('tally-float').locator('[data-out="stored"]').textContent(), '—');
  assert.equal(seen.mem1.state.cf, '0');
  assert.match(seen.mem1.notice, /mem1\.cf \(with it, the engine refused ep: .*mixture-of-experts/);
  assert.equal(seen.mem2.state.seq, '8192');
  assert.match(seen.mem2.notice, /mem2\.seq \(/);
  for (const key of ['cmp2', 'float1', 'mem1', 'mem2']) assert.equal(seen[key].error, null, `${key} shows a result`);
  for (const n of [0, 1])
    assert.match(
      await page.locator('tally-memory-budget').nth(n).locator('[data-out="verdict"]').textContent(),
      /^(Fits|Does not fit)/,
    );
  assert.deepEqual(errors(page), []);

  // A share link keeps ZeRO 3 with the ZeRO-3 buffer: set by the reader, written to the URL, loaded again.
  await load(site, '/', page);
  const memory = page.locator('tally-memory-budget').first();
  await setControl(memory, 'zero', '3');
  await setControl(memory, 'z3buf', 'layer');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('mem1.z3buf') === 'layer');
  const link = new URL(page.url());
  await load(site, `/${link.search}`, page);
  seen = await inspect(page);
  assert.equal(seen.mem1.state.zero, '3');
  assert.equal(seen.mem1.state.z3buf, 'layer');
  assert.equal(seen.mem1.notice, '');
  await page.close();
});
