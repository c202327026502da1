// Every widget shows the engine's `warnings` (legal but implausible input) on screen, in a status line that
// screen readers announce, and clears them when the next result has none.
//
// training_cost warns by itself (an MFU above any published run). The methods behind the other widgets return
// no warnings for any input today, so for them the engine loader is instrumented to add one warning to that
// method's real answer: the test checks the widget's display path, which is the same for every warning.
import test from 'node:test';
import assert from 'node:assert/strict';
import { sitePage } from './harness.mjs';
import { setControl, errors, openWidgetAlone, wrapEngineCalls } from './page-helpers.mjs';

/** The widget's warnings line: its text, role and whether it is on screen. */
function warningsOf(widget) {
  return widget.evaluate((el) => {
    const box = el.shadowRoot.querySelector('.warnings');
    if (!box) return { text: '', role: null, visible: false };
    const rect = box.getBoundingClientRect();
    return {
      text: box.textContent,
      role: box.getAttribute('role'),
      visible: rect.width > 0 && rect.height > 0 && getComputedStyle(box).display !== 'none',
    };
  });
}

test('compute: an MFU of 90 % shows the engine warning (above any published run) on screen, and 50 % clears it', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openWidgetAlone(site, page, 'tally-compute', 'model="llama-3-8b" mfu="0.5"');
  assert.equal((await warningsOf(widget)).text, '');
  await setControl(widget, 'mfu', '0.9');
  const shown = await warningsOf(widget);
  const engine = await widget.evaluate((el) => el.result.cost.warnings);
  assert.equal(engine.length, 1);
  assert.equal(shown.text, `Warning: ${engine[0].message}`);
  assert.match(shown.text, /mfu 90(\.0)? % is above any published large-scale training run/);
  assert.equal(shown.role, 'status');
  assert.ok(shown.visible, 'the warning is on screen, not only in the console');
  await setControl(widget, 'mfu', '0.5');
  assert.equal((await warningsOf(widget)).text, '');
  assert.deepEqual(errors(page), []);
});

const INJECTED = [
  { tag: 'tally-memory-budget', attributes: 'model="llama-3-8b"', method: 'memory_budget', control: ['gpus', '16'] },
  { tag: 'tally-step', attributes: '', method: 'step_time', control: ['mbs', '2'] },
  { tag: 'tally-float', attributes: 'value="3.14"', method: 'float_explore', control: ['value', '2.5'] },
  { tag: 'tally-roofline', attributes: '', method: 'roofline', control: ['seq', '4096'] },
  { tag: 'tally-inference', attributes: 'model="llama-3-8b"', method: 'inference', control: ['batch', '16'] },
];

for (const c of INJECTED) {
  test(`${c.tag}: a warning in the ${c.method} result is shown beside the result and cleared by the next result without one`, async (t) => {
    const { site, page } = await sitePage(t);
    const widget = await openWidgetAlone(site, page, c.tag, c.attributes, { init: wrapEngineCalls });
    assert.equal((await warningsOf(widget)).text, '');
    const message = `${c.method} test warning: this input is legal but implausible`;
    await page.evaluate(
      ([method, text]) => {
        globalThis.__warnOn = { method, warning: { field: 'test', message: text } };
      },
      [c.method, message],
    );
    await setControl(widget, ...c.control);
    const shown = await warningsOf(widget);
    assert.equal(shown.text, `Warning: ${message}`);
    assert.equal(shown.role, 'status');
    assert.ok(shown.visible);
    await page.evaluate(() => {
      globalThis.__warnOn = null;
    });
    await setControl(widget, c.control[0], c.control[0] === 'value' ? '3.14' : c.control[0] === 'seq' ? '2048' : '1');
    assert.equal((await warningsOf(widget)).text, '');
    assert.deepEqual(errors(page), []);
  });
}

test('memory: GPT-2 small at 131,072 tokens warns that it has only 1,024 learned positions, and 1,024 clears it', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openWidgetAlone(site, page, 'tally-memory-budget', 'model="gpt2-small" seq="1024"');
  assert.equal((await warningsOf(widget)).text, '');
  await setControl(widget, 'seq', '131072');
  const shown = await warningsOf(widget);
  assert.match(shown.text, /131,?072 is past the 1024 learned positions \(max_positions\) of GPT-2 small/);
  assert.ok(shown.visible, 'on screen');
  await setControl(widget, 'seq', '1024');
  assert.equal((await warningsOf(widget)).text, '');
  assert.deepEqual(errors(page), []);
});
