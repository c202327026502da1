// Helpers for the embedding-route tests (embed-iframe, single-file, package, markdown): read what a widget
// computed, in whatever page or frame it lives, and the native CLI's answer for the same arguments; a course
// site on an origin of its own.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from './page-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

/** Reads, inside the page, the engine method, arguments and result a widget is showing now. */
function shownCall(el) {
  const out = (key) => el.shadowRoot.querySelector(`[data-out="${key}"]`)?.textContent;
  switch (el.localName) {
    case 'tally-memory-budget':
      return { method: 'memory_budget', args: el.budgetArgs, result: el.budget, text: out('verdict') };
    case 'tally-compute':
      return { method: 'training_cost', args: el.result?.args, result: el.result?.cost, text: out('days') };
    case 'tally-inference':
      return { method: 'inference', args: el.inferenceArgs, result: el.result, text: out('decode') };
    case 'tally-collectives':
      return { method: 'collective', args: el.args, result: el.result, text: out('time') };
    case 'tally-step':
      return { method: 'step_time', args: el.stepArgs, result: el.result, text: out('mfu') };
    case 'tally-float': {
      const args = { ...el.args(), value: el.state.value };
      return { method: 'float_encode', args, result: el.current, text: out('stored') };
    }
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

/** A course site on its own origin serving `files` ({name: html}) under `csp` (null: none); close() removes it. */
export async function courseSite(files, csp = null) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-course-'));
  for (const [name, html] of Object.entries(files)) writeFileSync(path.join(dir, name), html);
  const server = await startServer(dir, 0, { csp });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
