// Helpers for the embedding-route tests (embed-iframe, single-file, package, markdown): read what a widget
// computed, in whatever page or frame it lives, and the native CLI's answer for the same arguments; a course
// site on an origin of its own.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from './page-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

/** Each widget's headline output, the text that must show a value. */
const HEADLINES = {
  'tally-memory-budget': '[data-out="verdict"]',
  'tally-compute': '[data-out="days"]',
  'tally-inference': '[data-out="decode"]',
  'tally-collectives': '[data-out="time"]',
  'tally-step': '[data-out="mfu"]',
  'tally-float': '[data-out="stored"]',
  'tally-roofline': 'svg',
};

/** Reads, inside the page, the engine call a widget is showing now (its public lastCall) and its headline text. */
function shownCall(el, headlines) {
  const selector = headlines[el.localName];
  if (!selector || !el.lastCall) return { method: null };
  const { method, args, result } = el.lastCall;
  return { method, args, result, text: el.shadowRoot.querySelector(selector)?.textContent };
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
  // A widget below the fold mounts as the reader comes near it (web/widgets/kit/mount.js). Scrolled by the page
  // itself: playwright's scrollIntoViewIfNeeded waits for a stable box, which a frame that resizes never gives.
  await handle.evaluate((el) => el.scrollIntoView({ block: 'nearest' }));
  await handle.evaluate((el) => el.ready);
  const shown = await handle.evaluate(shownCall, HEADLINES);
  assert.ok(shown.method, `${label}: a known widget`);
  assert.ok(shown.result, `${label}: ${shown.method} has a result`);
  assert.deepEqual(shown.result, native(shown.method, shown.args), `${label}: ${shown.method} equals the native CLI's`);
  assert.ok(
    shown.text && !/^\s*—\s*$/.test(shown.text) && !/NaN|Infinity/.test(shown.text),
    `${label}: shows a value (${shown.text})`,
  );
  return shown;
}
