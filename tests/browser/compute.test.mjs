// <tally-compute> in a real browser: 6ND, exact FLOPs, days, GPU-hours and cost equal the native CLI's
// answers for the same inputs (and the CLI's `time` flags the page engine's training_cost); bad input is
// flagged beside the field; screenshots at two widths (opt-in).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { screenshot, nativeCli, PHONE, sitePage } from './harness.mjs';
import { native, open, setControl, fieldError, errors, watch } from './page-helpers.mjs';

/** web/widgets/base.js formatNumber, for comparing page text with native numbers. */
function formatNumber(value, digits = 3) {
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e6 || magnitude < 1e-3)) {
    const [mantissa, exponent] = value.toExponential(digits - 1).split('e');
    return `${mantissa} × 10${String(Number(exponent)).replace(/[-0-9]/g, (c) => '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'['-0123456789'.indexOf(c)])}`;
  }
  return Number(value.toPrecision(digits + 1)).toLocaleString('en-US');
}

test('compute: 70B on 15T tokens on 1024 H100s at 50% MFU shows the native days, GPU-hours and cost', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#time');
  const widget = page.locator('section#time tally-compute');
  for (const [name, value] of [
    ['model', 'custom'],
    ['params', '70e9'],
    ['tokens', '15e12'],
    ['hardware', 'h100-sxm'],
    ['dtype', 'bf16'],
    ['gpus', '1024'],
    ['mfu', '0.5'],
    ['price', '2'],
  ])
    await setControl(widget, name, value);
  const args = {
    tokens: 15e12,
    gpus: 1024,
    mfu: 0.5,
    dollars_per_gpu_hour: 2,
    flops_basis: 'six_nd',
    params: 70e9,
    hardware: 'h100-sxm',
    dtype: 'bf16',
  };
  const expected = native('training_cost', args);
  const shown = await widget.evaluate((el) => el.result);
  assert.deepEqual(shown.args, args);
  assert.deepEqual(shown.cost, expected, 'wasm and native agree to the last bit');
  const out = (key) => widget.locator(`[data-out="${key}"]`).textContent();
  assert.equal(await out('days'), formatNumber(expected.seconds / 86400, 4));
  assert.match(
    await out('days'),
    /^143\.93$/,
    '70B x 15T on 1024 H100s at 50% MFU is about 144 days (CS336 lecture 2)',
  );
  assert.equal(await out('gpu_hours'), formatNumber(expected.gpu_seconds / 3600));
  assert.equal(await out('cost'), `$${(expected.cost_dollars / 1e6).toPrecision(3)} M`);
  assert.equal(await out('flops'), formatNumber(expected.six_nd));
  assert.match(await out('flops'), /^6\.30 × 10²⁴$/, '6 × 70e9 × 15e12');
  // The CLI's `time` flags are the API's arguments: with the peak given by hand, its JSON equals the page engine's.
  const byHand = { params: 70e9, tokens: 15e12, gpus: 1024, peak_tflops: 989.5, mfu: 0.5 };
  const flags = ['--params', '70e9', '--tokens', '15e12', '--gpus', '1024', '--peak-tflops', '989.5', '--mfu', '0.5'];
  const cli = JSON.parse(execFileSync(nativeCli, ['time', ...flags, '--json'], { encoding: 'utf8' }));
  const fromPage = await page.evaluate(
    async (a) => (await (await import('/engine.js')).getEngine()).call('training_cost', a),
    byHand,
  );
  assert.deepEqual(fromPage, cli);
  // Chinchilla reference (Hoffmann et al. 2022, ~20 tokens per parameter): the card shows the engine's count,
  // and the chart marks it beside the run's own tokens per parameter.
  assert.equal(expected.chinchilla_tokens, 1.4e12, '20 x 70B = 1.4T tokens');
  assert.equal(await out('chinchilla'), formatNumber(expected.chinchilla_tokens));
  assert.equal(await widget.locator('[data-out="chinchilla"]').evaluate((el) => el.closest('.result').hidden), false);
  const chart = widget.locator('[data-out="chart"]');
  assert.equal(await chart.locator('line.chin').count(), 1, 'a Chinchilla marker on the chart');
  assert.equal(await chart.locator('text.chin').textContent(), 'Chinchilla-optimal');
  assert.equal(
    await chart.locator('text.you').textContent(),
    `your run: ${formatNumber(expected.tokens_per_param, 3)} tokens/param`,
  );
  assert.equal(await chart.locator('text.you').textContent(), 'your run: 214.3 tokens/param', '15T / 70B');
  await screenshot(widget, 'compute-desktop');
  assert.deepEqual(errors(page), []);
});

test('compute: a preset model shows 6ND beside the exact matmul count from the native flops method', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#flops');
  const widget = page.locator('section#flops tally-compute');
  for (const [name, value] of [
    ['model', 'llama-3-8b'],
    ['tokens', '15e12'],
    ['seq', '8192'],
    ['hardware', 'h100-sxm'],
    ['gpus', '512'],
    ['mfu', '0.4'],
  ])
    await setControl(widget, name, value);
  const flops = native('flops', { model: 'llama-3-8b', seq: 8192, tokens: 15e12 });
  const cost = native('training_cost', {
    tokens: 15e12,
    gpus: 512,
    mfu: 0.4,
    dollars_per_gpu_hour: 2,
    flops_basis: 'six_nd',
    model: 'llama-3-8b',
    seq: 8192,
    hardware: 'h100-sxm',
    dtype: 'bf16',
  });
  const shown = await widget.evaluate((el) => el.result);
  assert.deepEqual(shown.flops, flops);
  assert.deepEqual(shown.cost, cost);
  assert.equal(
    await widget.locator('[name="params"]').inputValue(),
    String(flops.params_total),
    'the preset fills in its exact N',
  );
  assert.equal(await widget.locator('[data-out="flops"]').textContent(), formatNumber(flops.six_nd));
  assert.ok((await widget.locator('[data-out="exact"]').textContent()).startsWith(formatNumber(flops.model_flops)));
  assert.ok(flops.model_flops > flops.six_nd, 'at 8k context the exact count exceeds 6ND (attention scores)');
  assert.equal(await widget.locator('[data-out="components"] tbody tr').count(), flops.components.length);
  // A preset's Chinchilla point is 20 x its exact parameter count, the same from training_cost and flops.
  assert.equal(cost.chinchilla_tokens, 20 * flops.params_total);
  assert.equal(flops.chinchilla_tokens, cost.chinchilla_tokens);
  assert.equal(await widget.locator('[data-out="chinchilla"]').textContent(), formatNumber(cost.chinchilla_tokens));

  // Time from the exact count instead of 6ND: the engine's total is then the exact matmul FLOPs.
  await setControl(widget, 'basis', 'exact');
  const exact = native('training_cost', {
    tokens: 15e12,
    gpus: 512,
    mfu: 0.4,
    dollars_per_gpu_hour: 2,
    flops_basis: 'exact',
    model: 'llama-3-8b',
    seq: 8192,
    hardware: 'h100-sxm',
    dtype: 'bf16',
  });
  assert.deepEqual((await widget.evaluate((el) => el.result)).cost, exact);
  assert.equal(exact.total_flops, flops.exact);
  assert.equal(await widget.locator('[data-out="days-label"]').textContent(), 'Days (exact FLOPs)');
  // Exact FLOPs need a model: with a raw parameter count a sentence for the reader (not the engine's
  // "flops_basis exact needs a model…", written for API callers) appears beside the control, with the way out.
  await setControl(widget, 'params', '70e9');
  const refusal = await fieldError(widget, 'basis');
  assert.match(refusal, /need a model: choose one above, or use 6ND/);
  assert.doesNotMatch(refusal, /flops_basis|six_nd|preset or config/);
  for (const key of ['days', 'cost']) assert.equal(await widget.locator(`[data-out="${key}"]`).textContent(), '—');
  assert.deepEqual(errors(page), []);
});

test('compute: empty, negative, non-numeric and absurd inputs are rejected beside the field', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#time');
  const widget = page.locator('section#time tally-compute');
  for (const [name, value, pattern, good] of [
    ['mfu', '1.5', /mfu must be in \(0, 1\]/, '0.5'],
    ['mfu', '', /empty/, '0.5'],
    ['mfu', 'half', /must be a number/, '0.5'],
    ['tokens', '-1', /tokens/, '15e12'],
    ['tokens', '1e999', /too large/, '15e12'],
    ['gpus', '0', /gpus/, '1024'],
    ['params', '-70e9', /params/, '70e9'],
    ['price', '-2', /dollars_per_gpu_hour|price/, '2'],
  ]) {
    await setControl(widget, name, value);
    assert.match(await fieldError(widget, name), pattern, `${name}=${JSON.stringify(value)}`);
    assert.equal(await widget.locator('[data-out="days"]').textContent(), '—');
    await setControl(widget, name, good);
    assert.equal(await fieldError(widget, name), '');
    assert.notEqual(await widget.locator('[data-out="days"]').textContent(), '—');
  }
  const phone = await site.newPage(PHONE);
  await open(site, phone, '/#time');
  const small = phone.locator('section#time tally-compute');
  await small.scrollIntoViewIfNeeded();
  await screenshot(small, 'compute-phone');
  assert.deepEqual([...errors(page), ...errors(phone)], []);
});

test('compute: a mixture of experts (Mixtral) uses its active parameters for 6ND and the days, and says so', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#time');
  const widget = page.locator('section#time tally-compute');
  for (const [name, value] of [
    ['model', 'mixtral-8x7b'],
    ['tokens', '1e12'],
    ['hardware', 'h100-sxm'],
    ['gpus', '64'],
    ['mfu', '0.4'],
  ])
    await setControl(widget, name, value);
  const { total, active } = native('params', { model: 'mixtral-8x7b' });
  assert.ok(active < total / 3, 'top-2 of 8 experts');
  assert.equal(await widget.locator('[name="params"]').inputValue(), String(active), 'N is the active count');
  // 6ND with the active N: 6 × 12.9B × 1T, not 6 × 46.7B × 1T (a factor 3.6 apart).
  assert.equal(await widget.locator('[data-out="flops"]').textContent(), formatNumber(6 * active * 1e12));
  assert.notEqual(formatNumber(6 * active * 1e12), formatNumber(6 * total * 1e12));
  assert.equal(await widget.locator('[data-out="flops-label"]').textContent(), 'Training FLOPs (6ND, N = active)');
  const days = (6 * active * 1e12) / (64 * 989.5e12 * 0.4) / 86400; // D·6N / (gpus · dense bf16 peak · MFU), in days
  assert.equal(await widget.locator('[data-out="days"]').textContent(), formatNumber(days, 4));
  const note = widget.locator('[data-out="moe"]');
  assert.equal(await note.isVisible(), true);
  assert.match(await note.textContent(), /active parameters each token visits; memory stores all/);
  // A dense model hides the note.
  await setControl(widget, 'model', 'llama-3-8b');
  assert.equal(await note.isVisible(), false);
  assert.deepEqual(errors(page), []);
});
