// web/engine.js on the page: constant answers (presets, the kernel list, format tables) reach the wasm engine
// once per page however many widgets ask, and one edit of a select or checkbox costs one update (one engine
// call in the memory widget, one per roof in the roofline widget), not one per DOM event.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP } from './harness.mjs';
import { open, setControl, errors } from './page-helpers.mjs';

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

test('engine.js: presets reach the engine once per page although several widgets read them, and cached answers are frozen', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const page = await site.newPage(DESKTOP);
  await open(site, page, '/');
  await page
    .locator('tally-roofline')
    .first()
    .evaluate((el) => el.ready);
  const calls = await callsSince(page, 0);
  const widgets = await page.evaluate(
    () => document.querySelectorAll('tally-memory-budget, tally-compute, tally-roofline').length,
  );
  assert.ok(widgets >= 3, `${widgets} widgets that read presets`);
  assert.equal(calls.filter((m) => m === 'presets').length, 1, `presets asked once: ${calls.join(', ')}`);
  const frozen = await page.evaluate(async () => {
    const engine = await (await import('/engine.js')).getEngine();
    const presets = engine.call('presets', {});
    return { same: presets === engine.call('presets', {}), frozen: Object.isFrozen(presets.hardware[0]) };
  });
  assert.deepEqual(frozen, { same: true, frozen: true });
  assert.deepEqual(errors(page), []);
});

test('engine.js: one select or checkbox edit in the memory widget is one engine call; a roofline dtype change one call per roof', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const page = await site.newPage(DESKTOP);
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
