// The error bands (issue 35 item 6) stored in content/presets/step-bands/heldout.json are what
// `tally step --validate --runs content/validation/runs-modern.json --write-bands FILE` writes today (not stale);
// each is the order-statistic interval of its kind's signed residuals; step_time's result carries the band of its
// kind and regime, a generic query the residuals of generic predictions, an unseen GPU a widened one.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { declaredOnly, nativeCall, nativeRun, root } from './engine.mjs';

const runsFile = path.join(root, 'content/validation/runs-modern.json');
const stored = JSON.parse(readFileSync(path.join(root, 'content/presets/step-bands/heldout.json'), 'utf8'));
const report = JSON.parse(nativeRun(['step', '--validate', '--runs', runsFile, '--json']));
const step = (args) => JSON.parse(nativeCall('step_time', JSON.stringify(declaredOnly('step_time', args)))).result;

/** [x(j), x(k)] with (k - j) / (n + 1) >= 0.8, equal tails: the interval that holds 80 % of a new residual. */
function interval(errors) {
  const x = [...errors].sort((a, b) => a - b);
  const n1 = x.length + 1;
  const j = Math.max(1, Math.floor(0.1 * n1 + 1e-9));
  const k = Math.min(x.length, Math.ceil(0.9 * n1 - 1e-9));
  return [x[j - 1], x[k - 1]];
}

test('the stored bands are the ones --write-bands writes from the current model (not stale)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-bands-'));
  try {
    const out = path.join(dir, 'bands.json');
    const text = nativeRun(['step', '--validate', '--runs', runsFile, '--write-bands', out]);
    assert.match(text, /leave one source out\): \d+% of \d+ as given, \d+% of \d+ predicted as generic/);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), stored, 'rerun the command in the file and commit it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the any-stack band is the 80 % order-statistic interval of every generic residual', () => {
  const all = stored.bands.find((b) => b.level === 'any stack');
  const generic = report.runs.filter((r) => typeof r.generic_error === 'number').map((r) => r.generic_error);
  assert.equal(all.runs, generic.length);
  assert.deepEqual([all.lower, all.upper], interval(generic));
  assert.ok(all.lower < all.upper);
  // Every band of at least 9 runs, as the interval needs for 80 %.
  for (const b of stored.bands.filter((x) => x.level !== 'hardware median')) assert.ok(b.runs >= 9, b.key);
  assert.equal(report.band_coverage.runs, report.runs.length);
});

test("step_time's band is its kind's: published throughput in [predicted/(1+upper), predicted/(1+lower)]", () => {
  const data = JSON.parse(readFileSync(runsFile, 'utf8'));
  const run = data.runs.find((r) => r.id === 'nanotron-8p86b-8gpu');
  const r = step(run.args);
  const own = stored.bands.find((b) => b.level === r.band.level && b.key === r.band.key);
  assert.ok(own, 'the band is a stored one');
  assert.ok(r.band.key.startsWith('nanotron / '), r.band.key);
  assert.equal(r.band.lower, own.lower);
  assert.equal(r.band.upper, own.upper);
  assert.equal(r.band.half_width, Math.max(-own.lower, own.upper));
  assert.equal(r.band.tokens_per_second_low, r.tokens_per_second / (1 + own.upper));
  assert.equal(r.band.tokens_per_second_high, r.tokens_per_second / (1 + own.lower));
  assert.equal(r.band.step_seconds_high, r.step_seconds * (1 + own.upper));
  assert.equal(r.band.widened, false);
  // The same run as an unknown stack: the residuals of every run predicted as generic.
  const g = step({ ...run.args, stack: 'generic' });
  assert.match(g.band.level, /^any stack/);
  // On a GPU no run was measured on: the same kind's band, widened.
  const data2 = JSON.parse(readFileSync(runsFile, 'utf8'));
  assert.ok(!data2.runs.some((x) => x.args.hardware === 'mi300x'), 'no run on mi300x');
  const unseen = step({ ...run.args, stack: 'generic', hardware: 'mi300x' });
  assert.equal(unseen.band.widened, true);
  assert.match(unseen.band.level, /^any stack/);
});
