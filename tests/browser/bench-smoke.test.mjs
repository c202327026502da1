// The page benchmark still runs: scripts/bench/bench-page.mjs once, with few inputs per widget, must exit 0 and print
// every row with a number (it crashed when it read a widget that had not mounted). It measures nothing here.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { root, siteDir } from './harness.mjs';

test('bench-page.mjs runs one cold run to the end and prints a number in every row', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(root, 'scripts/bench/bench-page.mjs'), '--runs', '1', '--inputs', '5', '--site', siteDir],
    { maxBuffer: 16 * 2 ** 20 },
  );
  const rows = stdout.split('\n').filter((line) => /^\| (page|embed|\w+ widget)/.test(line));
  assert.ok(rows.length >= 9, `every row printed:\n${stdout}`);
  for (const row of rows) assert.match(row, /\| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/, `a number in ${row}`);
  assert.match(stdout, /load average [\d.]+ [\d.]+ [\d.]+/);
});
