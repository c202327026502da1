// Helpers for the embedding-route tests (embed-iframe, single-file, package, markdown): read what a widget
// computed, in whatever page or frame it lives, and the native CLI's answer for the same arguments.
import assert from 'node:assert/strict';
import { native } from './page-helpers.mjs';

/** Reads, inside the page, the engine method, arguments and result a widget is showing now. */
function shownCall(el) {
  switch (el.localName) {
    case 'tally-memory-budget':
      return {
        method: 'memory_budget',
        args: el.budgetArgs,
        result: el.budget,
        text: el.shadowRoot.querySelector('[data-out="verdict"]')?.textContent,
      };
    case 'tally-compute':
      return {
        method: 'training_cost',
        args: el.result?.args,
        result: el.result?.cost,
        text: el.shadowRoot.querySelector('[data-out="days"]')?.textContent,
      };
    case 'tally-inference':
      return {
        method: 'inference',
        args: el.inferenceArgs,
        result: el.result,
        text: el.shadowRoot.querySelector('[data-out="decode"]')?.textContent,
      };
    case 'tally-collectives':
      return {
        method: 'collective',
        args: el.args,
        result: el.result,
        text: el.shadowRoot.querySelector('[data-out="time"]')?.textContent,
      };
    case 'tally-step':
      return {
        method: 'step_time',
        args: el.stepArgs,
        result: el.result,
        text: el.shadowRoot.querySelector('[data-out="mfu"]')?.textContent,
      };
    case 'tally-float':
      return {
        method: 'float_encode',
        args: { ...el.args(), value: el.state.value },
        result: el.current,
        text: el.shadowRoot.querySelector('[data-out="stored"]')?.textContent,
      };
    case 'tally-roofline': {
      const root = el.shadowRoot;
      const args = {
        hardware: root.querySelector('input[name="hw"]:checked')?.value,
        dtype: root.querySelector('select[name="dtype"]').value,
        seq: Number(root.querySelector('input[name="seq"]').value),
        intensity: [10 ** -2, 10 ** 4.5],
      };
      return { method: 'roofline', args, result: el.roofs?.[0]?.result, text: root.querySelector('svg')?.textContent };
    }
    default:
      return { method: null };
  }
}

/**
 * Asserts that the widget `handle` (a playwright Locator or ElementHandle, in any frame) shows the engine's
 * numbers: its result equals the native CLI's for the same method and arguments, to the last bit, and its
 * headline text is a value, not a dash. Returns the call for further checks.
 */
export async function assertComputes(handle, label = '') {
  await handle.evaluate((el) => el.ready);
  const shown = await handle.evaluate(shownCall);
  assert.ok(shown.method, `${label}: a known widget`);
  assert.ok(shown.result, `${label}: ${shown.method} has a result`);
  assert.deepEqual(shown.result, native(shown.method, shown.args), `${label}: ${shown.method} equals the native CLI's`);
  assert.ok(
    shown.text && !/^\s*—\s*$/.test(shown.text) && !/NaN|Infinity/.test(shown.text),
    `${label}: shows a value (${shown.text})`,
  );
  return shown;
}
