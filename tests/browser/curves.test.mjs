// web/curves.js: the engine curves follow the calculator beside them. Changing the calculator redraws the
// curve for its setting, with a ring at the calculator's own point, and the ring sits on the engine's value.
import test from 'node:test';
import assert from 'node:assert/strict';
import { sitePage } from './harness.mjs';
import { open, setControl, errors, mountAll } from './page-helpers.mjs';

/** The title of the ring that marks the calculator's setting on a curve. */
const ring = (figure) => figure.locator('svg.fig-svg circle.marker title').textContent();

test('the activation curve follows the memory calculator of its chapter: model, sequence length and FlashAttention', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#activations');
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(page);
  const figure = page.locator('#fig-activations-vs-seq');
  const widget = page.locator('section#activations tally-memory-budget');
  await figure.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('#fig-activations-vs-seq svg circle.marker'), null, {
    timeout: 10000,
  });
  assert.match(
    await ring(figure),
    /8192 tokens, standard attention/,
    "the ring starts at the calculator's own setting",
  );
  const before = await figure.locator('svg.fig-svg').getAttribute('aria-label');
  assert.match(before, /llama-3-8b/);

  await setControl(widget, 'seq', '16384');
  await page.waitForFunction(() =>
    /16384 tokens/.test(document.querySelector('#fig-activations-vs-seq circle.marker title')?.textContent ?? ''),
  );
  await setControl(widget, 'model', 'llama-2-7b');
  // Off-screen curves redraw when they come near the viewport (web/curves.js), so look at it again.
  await figure.scrollIntoViewIfNeeded();
  await page.waitForFunction(() =>
    /llama-2-7b/.test(document.querySelector('#fig-activations-vs-seq svg.fig-svg')?.getAttribute('aria-label') ?? ''),
  );
  assert.equal(await figure.locator('svg.fig-svg circle.marker').count(), 1);
  assert.deepEqual(errors(page), []);
});

test('the days-against-MFU curve follows the cost calculator, and the ZeRO curve the sharding calculator', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/');
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(page);

  const mfu = page.locator('#fig-time-vs-mfu');
  await mfu.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('#fig-time-vs-mfu circle.marker'), null, { timeout: 10000 });
  assert.match(await ring(mfu), /MFU 50%/);
  const days = async () => await mfu.locator('svg.fig-svg').getAttribute('aria-label');
  await setControl(page.locator('section#time tally-compute'), 'gpus', '2048');
  await page.waitForFunction(() =>
    /2048 GPUs/.test(document.querySelector('#fig-time-vs-mfu svg.fig-svg')?.getAttribute('aria-label') ?? ''),
  );
  assert.match(await days(), /with 2048 GPUs/);

  const zero = page.locator('#fig-zero-vs-gpus');
  await zero.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('#fig-zero-vs-gpus circle.marker'), null, { timeout: 10000 });
  assert.match(await ring(zero), /64 GPUs, ZeRO-0/);
  await setControl(page.locator('section#sharding tally-memory-budget'), 'zero', '3');
  await page.waitForFunction(() =>
    /ZeRO-3/.test(document.querySelector('#fig-zero-vs-gpus circle.marker title')?.textContent ?? ''),
  );
  assert.deepEqual(errors(page), []);
});
