// The thin slice in a real browser: the page computes 6ND and days with the wasm engine.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { startSite, nativeCli } from './harness.mjs';
import { commit } from './page-helpers.mjs';

test("the compute widget shows the engine's 6ND FLOPs and days and flags a bad MFU beside the field", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const page = await site.newPage();
  await page.goto(site.url);
  const widget = page.locator('tally-compute').first();
  const days = widget.locator('[data-out="days"]');
  await widget.locator('input[name="params"]').waitFor();

  for (const [name, value] of [
    ['params', '70e9'],
    ['tokens', '15e12'],
    ['gpus', '1024'],
    ['peak_tflops', '989.5'],
    ['mfu', '0.5'],
  ])
    await widget.locator(`input[name="${name}"]`).fill(value);
  const native = JSON.parse(
    execFileSync(
      nativeCli,
      [
        'time',
        '--params',
        '70e9',
        '--tokens',
        '15e12',
        '--gpus',
        '1024',
        '--peak-tflops',
        '989.5',
        '--mfu',
        '0.5',
        '--json',
      ],
      { encoding: 'utf8' },
    ),
  );
  // The page shows the engine's numbers rounded for reading; the raw numbers must equal native's.
  const fromPage = await page.evaluate(
    async (args) => {
      const { getEngine } = await import('./engine.js');
      return (await getEngine()).call('training_cost', args);
    },
    { params: 70e9, tokens: 15e12, gpus: 1024, peak_tflops: 989.5, mfu: 0.5 },
  );
  assert.deepEqual(fromPage, native);
  assert.equal(await days.textContent(), Number((native.seconds / 86400).toPrecision(5)).toLocaleString('en-US'));
  assert.match(await widget.locator('[data-out="flops"]').textContent(), /^6\.30 × 10²⁴$/);

  await commit(widget.locator('input[name="mfu"]'), '1.5');
  assert.match(await widget.locator('.field[data-field="mfu"] .error').textContent(), /mfu must be in \(0, 1\]/);
  assert.equal(await days.textContent(), '—');
  await commit(widget.locator('input[name="mfu"]'), 'abc');
  assert.match(await widget.locator('.field[data-field="mfu"] .error').textContent(), /must be a number/);
  assert.deepEqual(page.errors, []);
});
