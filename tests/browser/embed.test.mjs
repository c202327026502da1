// The embed example: a course page that includes one script and two widgets, with no other code.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { screenshot, root, PHONE, sitePage } from './harness.mjs';
import { native, open, setControl, errors, watch } from './page-helpers.mjs';

test('the embed example has exactly one script and two widgets, and they work from their attributes', async (t) => {
  const source = readFileSync(path.join(root, 'web/embed-example.html'), 'utf8');
  assert.equal((source.match(/<script\b/g) ?? []).length, 1, 'one script tag');
  assert.match(source, /<script type="module" src="tally-widgets\.js"><\/script>/);

  const { site, page } = await sitePage(t);
  const wasm = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.wasm')) wasm.push(r.url());
  });
  await open(site, page, '/embed-example.html');

  const compute = page.locator('tally-compute');
  const memory = page.locator('tally-memory-budget');
  const cost = await compute.evaluate((el) => el.result.cost);
  assert.deepEqual(
    cost,
    native('training_cost', {
      tokens: 15e12,
      gpus: 256,
      mfu: 0.4,
      dollars_per_gpu_hour: 2.5,
      flops_basis: 'six_nd',
      model: 'llama-3-8b',
      seq: 4096,
      hardware: 'h100-sxm',
      dtype: 'bf16',
    }),
  );
  const budget = await memory.evaluate((el) => el.budget);
  assert.deepEqual(
    budget,
    native('memory_budget', {
      model: 'llama-3-8b',
      hardware: 'h100-sxm',
      recipe: 'bf16_mixed_adamw',
      gpus: 8,
      seq: 8192,
      micro_batch: 1,
      tp: 1,
      pp: 1,
      recompute: 'selective',
      zero: 3,
      flash_attention: false,
      sequence_parallel: false,
    }),
  );
  assert.equal(wasm.length, 1, 'two widgets share one engine instance (one wasm download)');

  // Widgets keep working after the reader changes them, and write their state to the course page's URL.
  await setControl(memory, 'gpus', '16');
  await page.waitForFunction(() => location.search.includes('mem1.gpus=16'));
  assert.equal(await memory.evaluate((el) => el.budget.setup.gpus), 16);
  await setControl(memory, 'gpus', '8');

  await screenshot(page, 'embed-desktop', { fullPage: true });
  const phone = await site.newPage(PHONE);
  await open(site, phone, '/embed-example.html');
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow}px)`);
  await screenshot(phone, 'embed-phone', { fullPage: true });
  assert.deepEqual([...errors(page), ...errors(phone)], []);
});
