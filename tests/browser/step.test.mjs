// <tally-step> in a real browser: its step time equals the native CLI's, bad input is flagged beside the field,
// the planner's best layout is one click away, the state round-trips through the URL, and screenshots are saved.
import test from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, PHONE, sitePage } from './harness.mjs';
import { native, open, setControl, fieldError, errors } from './page-helpers.mjs';
import { nativeCall, PLANNER_EXAMPLE } from '../node/engine.mjs';

/**
 * A prediction as the band lets it be shown, computed here from the Particle Data Group's rounding rule (Review
 * of Particle Physics, Introduction: the error's three leading digits 100-354 keep two figures, 355-949 one,
 * 950-999 round up to 1000 with two), the value rounded to the error's last kept place.
 */
function bandText(value, halfWidth) {
  const [mantissa, exponent] = (value * halfWidth).toExponential(2).split('e');
  const lead = Number(mantissa.replace('.', ''));
  const last = Number(exponent) - (lead <= 354 || lead >= 950 ? 1 : 0); // the kept place is 10^last
  const digits = Math.max(0, -last);
  const rounded = Math.round(value / 10 ** last) * 10 ** last;
  return rounded.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A band's bounds as the widget shows them: two significant figures, signed ("−5.2% to +22%"). */
const signed = (e) => `${e < 0 ? '−' : '+'}${Number((100 * Math.abs(e)).toPrecision(2)).toLocaleString('en-US')}%`;
const interval = (b) => `${signed(b.lower)} to ${signed(b.upper)}`;
const bandLine = (b) =>
  b.level.startsWith('any stack')
    ? `${interval(b)} (${b.runs} runs predicted as the generic stack: ${b.key}${b.widened ? '; widened: no published run on this GPU' : ''})`
    : `${interval(b)} (${b.runs} runs of this kind: ${b.key}${b.widened ? '; widened: no published run on this GPU' : ''})`;

/** Sets each [field, value] as a reader would, in order; returns the widget's engine call then, {args, result}. */
async function setAll(widget, pairs) {
  for (const [name, value] of pairs) await setControl(widget, name, value);
  return widget.evaluate((el) => ({ args: el.stepArgs, result: el.result }));
}

/** A fresh site and page on the step-time chapter, its widget ready; the site closes when the test ends. */
async function openStep(t) {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#step-time');
  const widget = page.locator('section#step-time tally-step');
  await widget.evaluate((el) => el.ready);
  return { site, page, widget };
}

test('step time: Llama 3 70B on 64 H100s shows exactly the native prediction, and the planner applies a layout', async (t) => {
  const { site, page, widget } = await openStep(t);
  await setControl(widget, 'tp', '8');
  await setControl(widget, 'pp', '2');

  const shown = await widget.evaluate((el) => ({ args: el.stepArgs, result: el.result }));
  assert.equal(shown.args.tp, 8);
  assert.deepEqual(shown.result, native('step_time', shown.args), 'wasm and native agree to the last bit');
  const mfu = await widget.locator('[data-out="mfu"]').textContent();
  assert.match(mfu, /^\d+(\.\d+)?%$/);
  // One timeline segment per exposed, non-zero component.
  assert.equal(
    await widget.locator('svg rect.seg').count(),
    shown.result.breakdown.filter((p) => p.exposed && p.seconds > 0).length,
  );

  // Bad input: 64 GPUs do not split into tp 3 × pp 2; the message sits beside the GPU count, no NaN on screen.
  await setControl(widget, 'tp', '3');
  assert.match(await fieldError(widget, 'gpus'), /multiple of tp·pp/);
  assert.equal(await widget.locator('[data-out="mfu"]').textContent(), '—');
  await setControl(widget, 'tp', '8');

  // The planner: its best layout, applied with one click, gives the MFU the plan promised.
  await widget.locator('button[data-action="plan"]').click();
  await widget.locator('tr[data-rank="0"]').waitFor();
  const plan = await widget.evaluate((el) => el.plan);
  await widget.locator('button[data-use="0"]').click();
  const after = await widget.evaluate((el) => el.result);
  assert.equal(after.mfu, plan.best[0].mfu);
  await screenshot(widget, 'step-desktop');

  // The state is in the URL: a reload shows the same layout. Wait for the URL to hold the applied state itself
  // (an earlier edit already put a tp there, and the URL is written a moment after the change).
  await page.waitForFunction(() => {
    const el = document.querySelector('section#step-time tally-step');
    const query = new URLSearchParams(location.search);
    return Object.entries(el.getState()).every(([field, text]) => query.get(`${el.key}.${field}`) === text);
  });
  await page.reload();
  await open(site, page, page.url().replace(site.url, '/'));
  const reloaded = page.locator('section#step-time tally-step');
  await reloaded.evaluate((el) => el.ready);
  assert.equal((await reloaded.evaluate((el) => el.result)).mfu, plan.best[0].mfu);
  assert.deepEqual(errors(page), []);

  const phone = await site.newPage(PHONE);
  await open(site, phone, '/#step-time');
  const small = phone.locator('section#step-time tally-step');
  await small.evaluate((el) => el.ready);
  await screenshot(small, 'step-phone');
});

test('step time: a layout applied just before the reader leaves is in the history entry (flushed on pagehide)', async (t) => {
  const { site, page, widget } = await openStep(t);
  await widget.locator('button[data-action="plan"]').click();
  await widget.locator('tr[data-rank="0"]').waitFor();
  // In one task: nothing can write the URL between the click and pagehide but the pagehide listener itself.
  const seen = await widget.evaluate((el) => {
    const query = () => new URLSearchParams(location.search);
    const best = el.plan.best[0].layout;
    el.shadowRoot.querySelector('button[data-use="0"]').click();
    const pending = query().get(`${el.key}.tp`);
    window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
    return { key: el.key, state: el.getState(), tp: String(best.tp), pending, after: Object.fromEntries(query()) };
  });
  assert.equal(seen.state.tp, seen.tp, 'the planned layout is applied');
  assert.notEqual(seen.pending, seen.tp, 'before pagehide the change is still waiting to be written');
  for (const [field, text] of Object.entries(seen.state)) assert.equal(seen.after[`${seen.key}.${field}`], text, field);

  // Leaving at once and coming back: the page loads again from the history entry, whose URL holds the layout.
  const layout = seen.tp === '2' ? { tp: '8', pp: '2' } : { tp: '2', pp: '2' };
  await widget.evaluate((el, state) => el.setState(state), layout);
  await page.goto(new URL('/embed-example.html', site.url).href);
  await page.goBack();
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  const back = await page.evaluate(() => ({
    navigation: performance.getEntriesByType('navigation')[0].type,
    state: document.querySelector('section#step-time tally-step').getState(),
  }));
  assert.equal(back.navigation, 'back_forward', 'a fresh load from the history entry, not a restored page');
  assert.equal(back.state.tp, layout.tp);
  assert.equal(back.state.pp, layout.pp);
});

test('step time: predictions carry the digits their error band supports, and a layout that does not fit predicts none', async (t) => {
  const { page, widget } = await openStep(t);
  const text = (key) => widget.locator(`[data-out="${key}"]`).textContent();
  const result = await widget.evaluate((el) => el.result);
  assert.ok(result.fits && result.mfu >= 0.1, 'the chapter opens on a layout that fits, above 10 % MFU');
  const h = result.band.half_width;
  assert.ok(h > 0 && h < 1, 'the chapter opens on a layout with a stored band');
  assert.equal(await text('mfu'), `${bandText(100 * result.mfu, h)}%`);
  assert.doesNotMatch(await text('mfu'), /\.\d\d/, 'never "56.52%" under a band of tens of percent');
  assert.equal(await text('hfu'), `${bandText(100 * result.hfu, h)}%`, 'HFU, which recomputation moves differently');
  assert.equal(await text('step'), `${bandText(result.step_seconds, h)} s`);
  // The timeline's axis ends on the headline's step time, rounded alike (not 2 significant figures of its own).
  assert.equal(await widget.locator('svg.timeline text').last().textContent(), await text('step'));
  assert.equal(await text('tokens'), bandText(result.tokens_per_second, h));
  await widget.locator('button[data-action="plan"]').click();
  await widget.locator('tr[data-rank="0"]').waitFor();
  const best = (await widget.evaluate((el) => el.plan)).best[0];
  assert.equal(
    await widget.locator('tr[data-rank="0"] td.num').first().textContent(),
    `${bandText(100 * best.mfu, best.band.half_width)}%`,
  );

  // Llama 3 70B unsharded on each GPU (TP 1, PP 1, ZeRO 1) does not fit in 80 GB: memory says so, and no MFU is shown.
  await setControl(widget, 'tp', '1');
  await setControl(widget, 'pp', '1');
  assert.equal((await widget.evaluate((el) => el.result)).fits, false);
  assert.match(await text('memory'), /does not fit$/);
  for (const key of ['mfu', 'hfu', 'step', 'tokens', 'tflops', 'band'])
    assert.equal(await text(key), '— (does not fit)', key);
  assert.deepEqual(errors(page), []);
});

test("step time: the stack is a field offering the engine's profiles, and the band and breakdown are the engine's", async (t) => {
  const { page, widget } = await openStep(t);
  // The engine's list, as its own refusal of an unknown stack names it (the API has no list of profiles).
  const refusal = JSON.parse(
    nativeCall('step_time', JSON.stringify({ model: 'llama-3-70b', hardware: 'h100-sxm', stack: 'no-such' })),
  );
  assert.equal(refusal.error.field, 'stack');
  const engineStacks = refusal.error.message.match(/stack must be one of (.*), got/)[1].split(', ');
  const offered = await widget.locator('select[name="stack"] option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(offered, engineStacks);
  assert.equal(
    await widget.locator('select[name="stack"]').inputValue(),
    'generic',
    'the default, as the engine has it',
  );

  await setControl(widget, 'stack', 'megatron-te');
  // Megatron-Core overlaps no TP traffic by default: the run's own switch turns it on.
  assert.equal((await widget.evaluate((el) => el.stepArgs)).tp_comm_overlap, undefined, "the stack's default");
  await setControl(widget, 'tp_comm_overlap', 'true');
  const shown = await widget.evaluate((el) => ({ args: el.stepArgs, result: el.result }));
  assert.equal(shown.args.stack, 'megatron-te');
  assert.equal(shown.args.tp_comm_overlap, true);
  const expected = native('step_time', shown.args);
  assert.deepEqual(shown.result, expected, 'wasm and native agree to the last bit');
  assert.equal(expected.layout.stack, 'megatron-te');

  // The band beside the prediction: its interval, the runs it comes from and their kind.
  const b = expected.band;
  assert.equal(await widget.locator('[data-out="band"]').textContent(), bandLine(b));

  // The breakdown: one row per non-zero component as the engine returns it, the hidden ones marked.
  const rows = await widget
    .locator('tbody[data-out="breakdown"] tr')
    .evaluateAll((trs) =>
      trs.map((tr) => ({ id: tr.dataset.part, cells: [...tr.cells].map((c) => c.textContent.trim()) })),
    );
  const parts = expected.breakdown.filter((p) => p.seconds > 0);
  assert.deepEqual(
    rows.map((r) => r.id),
    parts.map((p) => p.id),
  );
  for (const [i, p] of parts.entries()) {
    assert.equal(rows[i].cells[1], bandText(p.seconds, b.half_width), `${p.id} seconds`);
    assert.equal(rows[i].cells[0], p.name, `${p.id} named as the engine names it`);
    assert.equal(rows[i].cells[2] === 'hidden', !p.exposed, `${p.id} exposed or hidden`);
  }
  assert.ok(
    rows.some((r) => r.id === 'tp_comm_hidden'),
    'megatron-te hides the sequence-parallel collectives',
  );

  // Planner rows carry their band, from the same stack.
  await widget.locator('button[data-action="plan"]').click();
  await widget.locator('tr[data-rank="0"]').waitFor();
  const plan = await widget.evaluate((el) => el.plan);
  const planned = native('plan', { ...PLANNER_EXAMPLE, stack: 'megatron-te', tp_comm_overlap: true, top: 5 });
  assert.deepEqual(plan, planned, 'the planner ran on the chosen stack');
  const bandCells = await widget
    .locator('tr[data-rank] td.num:nth-child(4)')
    .evaluateAll((tds) => tds.map((td) => td.textContent));
  assert.deepEqual(
    bandCells,
    planned.best.map((row) => interval(row.band)),
  );

  // An unknown stack is refused, naming the field, and the widget keeps its state.
  const refused = await widget.evaluate((el) => {
    try {
      el.setState({ stack: 'no-such' });
      return null;
    } catch (error) {
      return { field: error.field, stack: el.getState().stack };
    }
  });
  assert.deepEqual(refused, { field: 'stack', stack: 'megatron-te' });

  // nanotron keeps an fp32 gradient buffer over every parameter and splits its stages by cost: the 70B at TP 4
  // no longer fits an H100, and the widget says so instead of a band.
  await setControl(widget, 'stack', 'nanotron');
  const tight = native('step_time', await widget.evaluate((el) => el.stepArgs));
  assert.equal(tight.fits, false);
  assert.equal(await widget.locator('[data-out="band"]').textContent(), '— (does not fit)');
  // At TP 8 it fits, and a stack with runs of its own kind (nanotron on H100 in BF16) takes that band.
  await setControl(widget, 'tp', '8');
  const own = native('step_time', await widget.evaluate((el) => el.stepArgs)).band;
  assert.equal(own.level, 'stack/precision/hardware/regime');
  assert.equal(await widget.locator('[data-out="band"]').textContent(), bandLine(own));
  assert.deepEqual(errors(page), []);
});

test('step time: a context-parallel layout is a field away, and its K, V exchange is in the breakdown', async (t) => {
  const { widget } = await openStep(t);
  const shown = await setAll(widget, [
    ['tp', '8'],
    ['pp', '1'],
    ['seq', '131072'],
    ['batch', '8'],
    ['recompute', 'full'],
    ['cp', '8'],
  ]);
  assert.equal(shown.args.cp, 8);
  const expected = native('step_time', shown.args);
  assert.deepEqual(shown.result, expected, 'wasm and native agree to the last bit');
  assert.equal(expected.layout.cp, 8);
  const rows = await widget
    .locator('tbody[data-out="breakdown"] tr')
    .evaluateAll((trs) => trs.map((tr) => tr.dataset.part));
  // The generic stack all-gathers K and V in the open (the Llama 3 paper's exchange, engine/src/step/step_cp.cpp).
  assert.ok(rows.includes('cp_comm'), `breakdown rows ${rows}`);
});

test("step time: HSDP, torch.compile, async TP, FP8 all-gather and LoRA are fields from step_time's declarations, sent to the engine, range errors named beside them", async (t) => {
  const { page, widget } = await openStep(t);
  const declared = new Map(
    native('methods', { detail: true })
      .find((m) => m.name === 'step_time')
      .args.map((a) => [a.name, a]),
  );
  // Each starts on the engine's declared default (a checkbox on "true"/"false").
  for (const name of ['shard_group', 'compile', 'async_tp', 'fp8_all_gather', 'lora_rank', 'lora_targets']) {
    const control = widget.locator(`[name="${name}"]`);
    const shown = await control.evaluate((el) => (el.type === 'checkbox' ? String(el.checked) : el.value));
    assert.equal(shown, declared.get(name).default, `${name} starts on the declared default`);
  }

  // Values flow into the engine call, and the answer is the native one to the last bit.
  let shown = await setAll(widget, [
    ['stack', 'torchtitan'],
    ['compile', 'true'],
    ['async_tp', 'true'],
    ['lora_rank', '16'],
    ['lora_targets', 'all-linear'],
  ]);
  assert.equal(shown.args.compile, true);
  assert.equal(shown.args.async_tp, true);
  assert.equal(shown.args.lora_rank, 16);
  assert.equal(shown.args.lora_targets, 'all-linear');
  let expected = native('step_time', shown.args);
  assert.deepEqual(shown.result, expected, 'wasm and native agree to the last bit');
  assert.equal(expected.layout.lora_rank, 16);
  assert.equal(expected.layout.lora_targets, 'all-linear');
  assert.equal(expected.layout.compile, true);
  // LoRA freezes the base weights: no weight gradients, so the step is shorter than full training's.
  // Without adapters the modules do not apply (step_time refuses lora_targets with lora_rank 0): left out.
  const { lora_targets: _targets, ...withoutTargets } = shown.args;
  const full = native('step_time', { ...withoutTargets, lora_rank: 0 });
  assert.ok(expected.step_seconds < full.step_seconds, `${expected.step_seconds} < ${full.step_seconds}`);
  assert.match(await widget.locator('[data-out="step"]').textContent(), /^[\d.,]+ s$/);

  // The planner searches under the same choices.
  await widget.locator('button[data-action="plan"]').click();
  await widget.locator('tr[data-rank="0"]').waitFor();
  const plan = await widget.evaluate((el) => el.plan);
  const planned = native('plan', {
    ...PLANNER_EXAMPLE,
    stack: 'torchtitan',
    compile: true,
    async_tp: true,
    fp8_all_gather: false,
    lora_rank: 16,
    lora_targets: 'all-linear',
    top: 5,
  });
  assert.deepEqual(plan, planned);

  // HSDP: a shard group under ZeRO 3 is sent; under ZeRO 1 the engine refuses it, naming the field.
  // d = 64 / (t 4 · p 4) = 4: two shards of 2.
  shown = await setAll(widget, [
    ['zero', '3'],
    ['shard_group', '2'],
  ]);
  assert.equal(shown.args.shard_group, 2);
  expected = native('step_time', shown.args);
  assert.deepEqual(shown.result, expected);
  assert.equal(expected.layout.shard_group, 2);
  await setControl(widget, 'zero', '1');
  assert.match(await fieldError(widget, 'shard_group'), /shard_group.*zero 3/);
  assert.equal(await widget.locator('[data-out="mfu"]').textContent(), '—');
  await setControl(widget, 'shard_group', '0');

  // Out of its declared range: the engine's message, with the declared bounds, beside the field; no number shown.
  const rank = declared.get('lora_rank');
  for (const bad of [String(rank.low - 1), String(rank.high + 1)]) {
    await setControl(widget, 'lora_rank', bad);
    assert.equal(
      await fieldError(widget, 'lora_rank'),
      `lora_rank must be a whole number in [${rank.low}, ${rank.high}], got ${bad}`,
    );
    for (const key of ['mfu', 'step', 'tokens'])
      assert.equal(await widget.locator(`[data-out="${key}"]`).textContent(), '—');
  }
  await setControl(widget, 'lora_rank', '16');
  await setControl(widget, 'lora_targets', 'q,nope');
  assert.match(await fieldError(widget, 'lora_targets'), /^lora_targets must be a comma-separated list of .*"nope"/);
  await setControl(widget, 'lora_targets', 'q,v');
  assert.equal(await fieldError(widget, 'lora_targets'), '');
  // FP8 weight gathers need an FP8 precision, which this widget leaves at the engine's BF16.
  await setControl(widget, 'fp8_all_gather', 'true');
  assert.match(await fieldError(widget, 'fp8_all_gather'), /fp8_all_gather needs .*FP8 precision/);
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity|undefined/);

  // The state carries the new fields, as their attributes name them.
  const state = await widget.evaluate((el) => el.getState());
  assert.equal(state.fp8_all_gather, 'true');
  assert.equal(state.lora_rank, '16');
  assert.deepEqual(errors(page), []);
});
