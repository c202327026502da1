// Engine start-up cost, counted rather than timed: the engine loader is instrumented (every call that reaches
// the wasm module is recorded), and each widget alone on a page is checked for the calls its first render
// makes, for presets being asked for once per page, and for one engine round per control change (a <select>
// or checkbox fires both `input` and `change`; only one may reach the engine). On the whole page, web/engine.js's
// own count shows constant answers (presets) reaching the engine once however many widgets ask, frozen, and one
// edit of a select or checkbox costing one update (one call in the memory widget, one per roof in the roofline).
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP, sitePage } from './harness.mjs';
import { open, setControl, errors, watch, wrapEngineCalls, mountAll } from './page-helpers.mjs';

// Methods that reached the engine since the last mark (the page's shared engine from web/engine.js).
async function callsSince(page, mark) {
  return page.evaluate(async (from) => (await (await import('/engine.js')).getEngine()).engineCallsSince(from), mark);
}
// Waits until the page has made no engine call for a second (inline values are computed when idle), then
// returns the call count so far.
async function mark(page) {
  let count = -1;
  for (;;) {
    const now = await page.evaluate(async () => (await (await import('/engine.js')).getEngine()).engineCallCount);
    if (now === count) return now;
    count = now;
    await page.waitForTimeout(1000);
  }
}

/** A page holding one widget and the one script tag a course page uses. */
function widgetPage(tag, attributes) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${tag}</title>
<script type="module" src="/tally-widgets.js"></script></head><body><${tag} ${attributes}></${tag}></body></html>`;
}

/** Opens the widget alone; returns { page, widget, calls() }. */
async function openAlone(site, tag, attributes) {
  const page = watch(await site.newPage(DESKTOP));
  await page.addInitScript(wrapEngineCalls);
  const file = `/calls-${tag}.html`;
  await page.route(`**${file}`, (route) =>
    route.fulfill({ contentType: 'text/html', body: widgetPage(tag, attributes) }),
  );
  await page.goto(new URL(file, site.url).href);
  const widget = page.locator(tag);
  await page.waitForFunction((name) => customElements.get(name), tag);
  await widget.evaluate((el) => el.ready);
  return { page, widget, calls: () => page.evaluate(() => [...globalThis.__tallyCalls]) };
}

/**
 * Methods the widget's own first render asks the engine for (presets and other constant tables included). Widgets
 * with a defaults note (memory, compute, step, inference: docs/EMBEDDING.md) read the engine's literal defaults
 * from the contract (`methods`, asked once per page) with no second call; only a default the engine computes
 * (compute's basis and seq, step's global batch) is asked of the engine, once per distinct set of arguments.
 */
const CASES = [
  {
    tag: 'tally-memory-budget',
    attributes: 'model="llama-3-8b"',
    firstRender: ['presets', 'methods', 'memory_budget'],
    change: { control: 'zero', value: '3' },
    perChange: ['memory_budget'],
    check: { control: 'flash', value: 'true' },
  },
  {
    tag: 'tally-compute',
    attributes: 'model="llama-3-8b"',
    firstRender: ['presets', 'methods', 'training_cost', 'training_cost'],
    change: { control: 'dtype', value: 'fp8' },
    perChange: ['training_cost', 'training_cost'],
  },
  // The stack profiles come from the contract (step_time's declared stack values), not from a refused call.
  {
    tag: 'tally-step',
    attributes: '',
    firstRender: ['presets', 'methods', 'step_time', 'step_time'],
    change: { control: 'recompute', value: 'selective' },
    perChange: ['step_time', 'step_time'],
    check: { control: 'sp', value: 'false' },
  },
  {
    tag: 'tally-roofline',
    attributes: '',
    firstRender: ['presets', 'roofline'],
    change: { control: 'dtype', value: 'fp16' },
    perChange: ['roofline'],
  },
  {
    tag: 'tally-float',
    attributes: 'format="bf16" value="3.14"',
    firstRender: ['float_formats', 'float_explore'],
    change: { control: 'rounding', value: 'toward_zero' },
    perChange: ['float_explore'],
  },
  // The shown message, then the chart's 16 message sizes (8 B to 8 GiB), once per change and not again on redraw.
  {
    tag: 'tally-collectives',
    attributes: '',
    firstRender: ['presets', ...Array(17).fill('collective')],
    change: { control: 'collective', value: 'all_gather' },
    perChange: Array(17).fill('collective'),
  },
  // `model` fetches the preset's config once, so the KV-head count can be changed before `inference`.
  {
    tag: 'tally-inference',
    attributes: 'model="llama-3-8b"',
    firstRender: ['presets', 'model', 'methods', 'inference'],
    change: { control: 'kv_dtype', value: 'fp8' },
    perChange: ['inference'],
  },
];

for (const c of CASES) {
  test(`${c.tag}: first render asks the engine ${c.firstRender.length} times (${c.firstRender.join(', ')}), one select change asks ${c.perChange.join(' + ')} once`, async (t) => {
    const site = await startSite();
    t.after(() => site.close());
    const { page, widget, calls } = await openAlone(site, c.tag, c.attributes);
    const first = await calls();
    console.log(`${c.tag} first render: ${first.join(', ')}`);
    assert.deepEqual([...first].sort(), [...c.firstRender].sort());
    for (const control of [c.change, c.check].filter(Boolean)) {
      const before = (await calls()).length;
      await setControl(widget, control.control, control.value);
      const made = (await calls()).slice(before);
      console.log(`${c.tag} change ${control.control}: ${made.join(', ')}`);
      assert.deepEqual(made, c.perChange, `one ${control.control} change reaches the engine once per method`);
    }
    assert.deepEqual(errors(page), []);
  });
}

test('a page of every widget asks for presets once (wasm and engine.js counts), and the cached answer is frozen', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await page.addInitScript(wrapEngineCalls);
  await page.goto(new URL('/', site.url).href);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 30000 });
  await mountAll(page);
  await page
    .locator('tally-roofline')
    .first()
    .evaluate((el) => el.ready);
  const calls = await page.evaluate(() => [...globalThis.__tallyCalls]);
  const counts = Object.fromEntries([...new Set(calls)].map((m) => [m, calls.filter((x) => x === m).length]));
  console.log(`page start-up: ${calls.length} engine calls ${JSON.stringify(counts)}`);
  assert.equal(counts.presets, 1, 'presets fetched once for the whole page');
  assert.ok(calls.length > 0);
  const widgets = await page.evaluate(
    () => document.querySelectorAll('tally-memory-budget, tally-compute, tally-roofline').length,
  );
  assert.ok(widgets >= 3, `${widgets} widgets that read presets`);
  const counted = await callsSince(page, 0);
  assert.equal(
    counted.filter((m) => m === 'presets').length,
    1,
    `engine.js counts presets once: ${counted.join(', ')}`,
  );
  const frozen = await page.evaluate(async () => {
    const engine = await (await import('/engine.js')).getEngine();
    const presets = engine.call('presets', {});
    return { same: presets === engine.call('presets', {}), frozen: Object.isFrozen(presets.hardware[0]) };
  });
  assert.deepEqual(frozen, { same: true, frozen: true });
  assert.deepEqual(errors(page), []);
});

test('on the page, one select or checkbox edit in the memory widget is one engine call; a roofline dtype change one call per roof', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const memory = page.locator('tally-memory-budget').first();
  let before = await mark(page);
  await setControl(memory, 'zero', '3');
  assert.deepEqual(await callsSince(page, before), ['memory_budget'], 'select: input and change events, one update');
  before = await mark(page);
  await setControl(memory, 'flash', 'true');
  assert.deepEqual(await callsSince(page, before), ['memory_budget'], 'checkbox: one update');
  const roofline = page.locator('tally-roofline').first();
  await roofline.evaluate((el) => el.ready);
  before = await mark(page);
  await setControl(roofline, 'dtype', 'fp16');
  assert.deepEqual(await callsSince(page, before), ['roofline'], 'the roof and its operations in one call');
  assert.deepEqual(errors(page), []);
});
