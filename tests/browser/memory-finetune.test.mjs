// <tally-memory-budget>'s fine-tuning mode and pickers in a real browser: every engine preset is offered, LoRA and
// QLoRA show the engine's finetune breakdown and verdict, a refused rank is named on screen, the fine-tuning
// fields round-trip through the URL, and chapter 6 folds what it does not teach behind "More settings".
import test from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, DESKTOP, PHONE, sitePage } from './harness.mjs';
import { native, open, setControl, fieldError, gb, errors } from './page-helpers.mjs';

const CHAPTER6 = 'section#memory tally-memory-budget';

/** The widget's visible text, for "never NaN, Infinity or undefined on screen". */
const shownText = (widget) => widget.evaluate((el) => el.shadowRoot.querySelector('.widget').innerText);

test('memory pickers: every model and hardware preset the engine lists, and nothing else', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator(CHAPTER6);
  const presets = native('presets', {});
  const options = (name) => widget.locator(`select[name="${name}"] option`).evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(await options('model'), [...presets.models.map((m) => m.id), 'custom']);
  assert.deepEqual(
    await options('hardware'),
    presets.hardware.map((h) => h.id),
  );
  for (const id of ['deepseek-v3', 'gpt-oss-120b', 'gemma-2-9b', 'mistral-7b'])
    assert.ok((await options('model')).includes(id), id);
  for (const id of ['b200', 'gb200-nvl72', 'b300', 'mi325x', 'mi355x', 'rtx-4090'])
    assert.ok((await options('hardware')).includes(id), id);
  // A new preset is a budget the widget can show: DeepSeek-V3 on B200s gives the native engine's answer.
  await setControl(widget, 'model', 'deepseek-v3');
  await setControl(widget, 'hardware', 'b200');
  const shown = await widget.evaluate((el) => ({ args: el.budgetArgs, budget: el.budget }));
  assert.deepEqual(shown.budget, native('memory_budget', shown.args));
  assert.match(await widget.locator('[data-out="verdict"]').textContent(), /^(Fits|Does not fit)/);
  assert.deepEqual(errors(page), []);
});

test('memory fine-tuning: QLoRA of Llama 2 7B on an RTX 4090 shows the engine finetune breakdown and verdict', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator(CHAPTER6);
  const visible = (name) => widget.locator(`.field[data-field="${name}"]`).isVisible();
  assert.equal(await visible('rank'), false, 'pre-training shows no LoRA fields');
  for (const [name, value] of Object.entries({
    hardware: 'rtx-4090',
    seq: '512',
    mode: 'qlora',
    rank: '64',
    targets: 'all-linear',
  }))
    await setControl(widget, name, value);
  for (const name of ['rank', 'alpha', 'targets', 'dq', 'opt8', 'paged']) assert.ok(await visible(name), name);

  const shown = await widget.evaluate((el) => ({ method: el.method, args: el.budgetArgs, budget: el.budget }));
  assert.equal(shown.method, 'finetune');
  assert.equal(shown.args.method, 'qlora');
  assert.equal(shown.args.lora_rank, 64);
  assert.equal(shown.args.lora_targets, 'all-linear');
  const expected = native('finetune', shown.args);
  assert.deepEqual(shown.budget, expected, 'wasm and native agree to the last bit');
  const row = (id) => widget.locator(`tr[data-term="${id}"] td.num`).first().textContent();
  for (const id of [
    'frozen_weights',
    'trainable_weights',
    'gradients',
    'optimizer_states',
    'activations',
    'dequant_buffer',
  ])
    assert.equal(await row(id), gb(expected.per_gpu_bytes[id]), id);
  assert.match(await widget.locator('tr[data-term="frozen_weights"]').textContent(), /frozen base weights/);
  assert.match(await widget.locator('tr[data-term="trainable_weights"]').textContent(), /adapter weights/);
  const verdict = await widget.locator('[data-out="verdict"]').textContent();
  assert.ok(expected.fits, 'QLoRA of a 7B model fits a 24 GB card');
  assert.match(verdict, /^Fits/);
  assert.ok(verdict.includes(gb(expected.per_gpu_bytes.total)), verdict);
  assert.ok(verdict.includes('160 M of 6.74 B parameters train'), verdict);
  assert.equal(await widget.locator('[data-out="activations"]').isVisible(), false, 'no pre-training activation table');
  // The Markdown export names the mode and carries the finetune terms in bytes.
  const markdown = await widget.evaluate((el) => el.markdown());
  assert.match(markdown, /^Training memory per GPU \(QLoRA/);
  assert.ok(
    markdown.includes(`| frozen base weights | ${(expected.per_gpu_bytes.frozen_weights / 1e9).toFixed(2)} |`),
    markdown,
  );
  assert.ok(markdown.includes(`| ${expected.per_gpu_bytes.total} | 100% |`), markdown);

  // Full fine-tuning of the same model on the same card does not fit; the verdict says so in words.
  await setControl(widget, 'mode', 'full');
  assert.equal(await visible('rank'), false, 'full fine-tuning has no rank');
  const full = await widget.evaluate((el) => ({ args: el.budgetArgs, budget: el.budget }));
  assert.equal(full.args.lora_rank, undefined, 'hidden LoRA fields are not sent');
  assert.deepEqual(full.budget, native('finetune', full.args));
  assert.equal(full.budget.fits, false);
  assert.match(await widget.locator('[data-out="verdict"]').textContent(), /^Does not fit/);
  assert.equal(await widget.locator('tr[data-term="frozen_weights"]').count(), 0, 'nothing is frozen');
  // With a paged 8-bit optimizer on a 40 GB card the states can spill to host RAM: fits only with paging.
  for (const [name, value] of Object.entries({
    hardware: 'a100-40gb',
    recipe: 'bf16_adamw_no_master',
    opt8: true,
    paged: true,
  }))
    await setControl(widget, name, value);
  const paged = await widget.evaluate((el) => ({ args: el.budgetArgs, budget: el.budget }));
  assert.equal(paged.args.optimizer, 'adamw_8bit');
  assert.equal(paged.args.paged, true);
  assert.deepEqual(paged.budget, native('finetune', paged.args));
  assert.deepEqual([paged.budget.fits, paged.budget.fits_paged], [false, true]);
  const pagedVerdict = await widget.locator('[data-out="verdict"]').textContent();
  assert.match(pagedVerdict, /^Fits only with paging/);
  assert.ok(pagedVerdict.includes(gb(paged.budget.paged_floor_bytes)), pagedVerdict);
  await setControl(widget, 'mode', 'lora');
  await screenshot(widget, 'memory-finetune-desktop');
  assert.doesNotMatch(await shownText(widget), /NaN|Infinity|undefined/);
  assert.deepEqual(errors(page), []);
});

test('memory fine-tuning: a LoRA rank above the hidden size and other bad settings show the engine error by the field', async (t) => {
  const { site, page } = await sitePage(t, PHONE);
  await open(site, page, '/#memory');
  const widget = page.locator(CHAPTER6);
  const verdict = widget.locator('[data-out="verdict"]');
  await setControl(widget, 'mode', 'lora');
  await setControl(widget, 'rank', '5000');
  const message = await fieldError(widget, 'rank');
  assert.match(message, /lora_rank/);
  assert.match(message, /\[1, 4096\]/, 'the allowed range, up to the hidden size');
  assert.match(await verdict.textContent(), /^No result: .*lora_rank/);
  assert.equal(await widget.locator('tr[data-term]').count(), 0, 'no stale table');
  assert.doesNotMatch(await shownText(widget), /NaN|Infinity|undefined/);
  await screenshot(widget, 'memory-finetune-refusal-phone');

  for (const [name, value, field, pattern] of [
    ['rank', 'eight', 'rank', /must be a number/],
    ['rank', '8', 'alpha', null],
    ['alpha', '0', 'alpha', /lora_alpha.*\(0, 1e6\]/],
    ['alpha', '16', 'ldrop', null],
    ['ldrop', '1', 'ldrop', /lora_dropout.*\[0, 1\)/],
  ]) {
    await setControl(widget, name, value);
    if (!pattern) {
      assert.equal(await fieldError(widget, name), '');
      continue;
    }
    assert.match(await fieldError(widget, field), pattern, `${name}=${value}`);
    assert.match(await verdict.textContent(), /^No result: /);
  }
  await setControl(widget, 'ldrop', '0');
  // GPT-2 has no gated MLP: the target list names the missing module.
  await setControl(widget, 'model', 'gpt2-small');
  await setControl(widget, 'targets', 'q_a,q_b,kv_a,kv_b,o');
  assert.match(await fieldError(widget, 'targets'), /lora_targets/);
  await setControl(widget, 'targets', 'q,v');
  assert.match(await verdict.textContent(), /^(Fits|Does not fit)/);
  assert.deepEqual(errors(page), []);
});

test('memory fine-tuning: the mode and LoRA settings round-trip through the URL and setState', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator(CHAPTER6);
  const key = await widget.evaluate((el) => el.key);
  const settings = {
    mode: 'qlora',
    rank: '32',
    alpha: '64',
    targets: 'all-linear',
    dq: false,
    opt8: true,
    paged: true,
  };
  for (const [name, value] of Object.entries(settings)) await setControl(widget, name, value);
  await page.waitForFunction((k) => new URLSearchParams(location.search).get(`${k}.paged`) === 'true', key);
  const state = await widget.evaluate((el) => el.getState());
  for (const [name, value] of Object.entries(settings)) assert.equal(state[name], String(value), name);
  const args = await widget.evaluate((el) => el.budgetArgs);
  assert.equal(args.double_quant, false);
  assert.equal(args.optimizer, 'adamw_8bit');
  assert.equal(args.paged, true);

  const again = await site.newPage(DESKTOP);
  await open(site, again, page.url().replace(site.url, '/'));
  const restored = again.locator(CHAPTER6);
  await restored.evaluate((el) => el.ready);
  assert.deepEqual(await restored.evaluate((el) => el.getState()), state);
  assert.deepEqual(await restored.evaluate((el) => el.budget), native('finetune', args));

  // setState refuses a rank the engine refuses, names the field, and leaves the state as it was.
  const refusal = await restored.evaluate((el) => {
    try {
      el.setState({ rank: '99999' });
      return null;
    } catch (error) {
      return { field: error.field, message: error.message, rank: el.getState().rank };
    }
  });
  assert.equal(refusal.field, 'rank');
  assert.match(refusal.message, /lora_rank/);
  assert.equal(refusal.rank, '32');
  // A link with a mode the widget does not know is ignored with a notice naming the parameter.
  const bad = await site.newPage(DESKTOP);
  await open(site, bad, `/?${key}.mode=dpo#memory`);
  const w = bad.locator(CHAPTER6);
  await w.evaluate((el) => el.ready);
  assert.match(await w.locator('.url-notice').textContent(), new RegExp(`${key}\\.mode`));
  assert.equal(await w.locator('[name="mode"]').inputValue(), 'pretrain');
  assert.deepEqual([...errors(page), ...errors(again), ...errors(bad)], []);
});

test('memory: chapter 6 folds what it does not teach behind "More settings"; a link that sets one opens it', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#memory');
  const widget = page.locator(CHAPTER6);
  const more = widget.locator('details[data-out="more"]');
  assert.equal(await more.evaluate((d) => d.open), false);
  const folded = await more.locator('.field').evaluateAll((fs) => fs.map((f) => f.dataset.field));
  for (const name of ['ep', 'cf', 'dseq', 'tp', 'pp', 'zero', 'recompute', 'flash'])
    assert.ok(folded.includes(name), name);
  for (const name of ['model', 'hardware', 'mode', 'recipe', 'seq', 'mbs']) {
    assert.ok(!folded.includes(name), name);
    assert.ok(await widget.locator(`.field[data-field="${name}"]`).isVisible(), name);
  }
  assert.equal(await widget.locator('[name="ep"]').isVisible(), false);
  // Chapter 8's widget shows what sharding teaches and folds the fine-tuning, MoE and encoder-decoder fields.
  const sharding = page.locator('section#sharding tally-memory-budget');
  const shardingFolded = await sharding
    .locator('details[data-out="more"] .field')
    .evaluateAll((fs) => fs.map((f) => f.dataset.field));
  for (const name of ['cf', 'dseq', 'ep', 'mode', 'rank']) assert.ok(shardingFolded.includes(name), name);
  for (const name of ['tp', 'pp', 'zero', 'sp', 'gpus']) assert.ok(!shardingFolded.includes(name), name);
  // A link that sets a folded field shows it.
  const key = await widget.evaluate((el) => el.key);
  const linked = await site.newPage(DESKTOP);
  await open(site, linked, `/?${key}.zero=3&${key}.gpus=8#memory`);
  const w = linked.locator(CHAPTER6);
  await w.evaluate((el) => el.ready);
  assert.equal(await w.locator('details[data-out="more"]').evaluate((d) => d.open), true);
  assert.ok(await w.locator('[name="zero"]').isVisible());
  assert.deepEqual([...errors(page), ...errors(linked)], []);
});
