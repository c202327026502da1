// The error bands (issue 24 item 5) stored in content/presets/step-bands/heldout.json are what
// `tally step --validate --runs content/validation/runs-modern.json --write-bands FILE` writes today (not stale),
// and step_time's result carries the band of its kind and regime, falling back to coarser kinds.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { declaredOnly, nativeCall, nativeRun, root } from './engine.mjs';

const runsFile = path.join(root, 'content/validation/runs-modern.json');
const stored = JSON.parse(readFileSync(path.join(root, 'content/presets/step-bands/heldout.json'), 'utf8'));

test('the stored bands are the ones --write-bands writes from the current model (not stale)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-bands-'));
  try {
    const out = path.join(dir, 'bands.json');
    const text = nativeRun(['step', '--validate', '--runs', runsFile, '--write-bands', out]);
    assert.match(text, /held-out runs inside their error band: \d+% .*\d+% /);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), stored, 'rerun the command in the file and commit it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every band is the 80th percentile of |error| over the held-out runs of its kind', () => {
  const report = JSON.parse(nativeRun(['step', '--validate', '--runs', runsFile, '--json']));
  const heldout = report.runs.filter((r) => r.half === 'heldout');
  const all = stored.bands.find((b) => b.level === 'all');
  assert.equal(all.runs, heldout.length);
  const errors = heldout.map((r) => Math.abs(r.error)).sort((a, b) => a - b);
  assert.equal(all.half_width, errors[Math.ceil(0.8 * errors.length) - 1]);
  const inside = heldout.filter((r) => Math.abs(r.error) <= all.half_width).length / heldout.length;
  assert.ok(inside >= 0.8, `${inside} of held-out runs inside the all-runs band`);
  assert.equal(report.band_coverage.heldout_runs, heldout.length);
});

test("step_time's band is its kind's and regime's, else the coarser one's", () => {
  const data = JSON.parse(readFileSync(runsFile, 'utf8'));
  const nanotron = data.runs.find((r) => r.id === 'nanotron-8p86b-8gpu');
  nanotron.args = declaredOnly('step_time', nanotron.args);
  const r = JSON.parse(nativeCall('step_time', JSON.stringify(nanotron.args))).result;
  // Compute-bound: matmuls, memory-bound kernels and FP8 casts are at least three quarters of the step.
  const compute = r.breakdown
    .filter((p) => p.exposed && ['matmul', 'memory_bound', 'fp8_cast'].includes(p.id))
    .reduce((a, p) => a + p.seconds, 0);
  assert.ok(compute / r.step_seconds >= 0.75);
  assert.equal(r.band.regime, 'compute-bound');
  const own = stored.bands.find((b) => b.key === 'nanotron / bf16 / h100-sxm / compute-bound');
  assert.equal(r.band.key, own.key);
  assert.equal(r.band.half_width, own.half_width);
  // |error| <= h with error = (predicted - published) / published: published in [predicted/(1+h), predicted/(1-h)].
  assert.equal(r.band.tokens_per_second_low, r.tokens_per_second / (1 + own.half_width));
  assert.equal(r.band.tokens_per_second_high, r.tokens_per_second / (1 - own.half_width));
  // The same sweep at 512 GPUs spends most of its step outside compute: the overhead-bound band, its own width.
  const wide = data.runs.find((x) => x.id === 'nanotron-3p57b-512gpu');
  const rw = JSON.parse(nativeCall('step_time', JSON.stringify(declaredOnly('step_time', wide.args)))).result;
  assert.equal(rw.band.regime, 'overhead-bound');
  const overhead = stored.bands.find((b) => b.key === 'nanotron / bf16 / h100-sxm / overhead-bound');
  assert.equal(rw.band.key, overhead.key);
  assert.equal(rw.band.half_width, overhead.half_width);
  assert.notEqual(overhead.half_width, own.half_width);
  if (rw.band.half_width >= 1) assert.equal(rw.band.tokens_per_second_high, null, 'unbounded above');
  // No held-out run of megatron-te on B200: the band of its regime over all held-out runs.
  const other = JSON.parse(
    nativeCall('step_time', JSON.stringify({ ...nanotron.args, stack: 'megatron-te', hardware: 'b200' })),
  ).result;
  assert.equal(other.band.level, 'regime');
  assert.equal(other.band.key, other.band.regime);
});

test("a machine's other precisions set a run's band before the stack's other machines", () => {
  const data = JSON.parse(readFileSync(runsFile, 'utf8'));
  // torchao's B200 table: one run per precision, all on the same power-limited machine.
  const runs = data.runs.filter((r) => r.args.hardware === 'b200-power-limited');
  assert.ok(runs.length >= 3, 'enough runs on that machine for a band of its own');
  const kinds = new Set(runs.map((r) => r.group.precision));
  assert.ok(kinds.size >= 3, 'the runs span several precisions');
  for (const run of runs) {
    const r = JSON.parse(nativeCall('step_time', JSON.stringify(declaredOnly('step_time', run.args)))).result;
    const own = stored.bands.find(
      (b) =>
        b.level === 'stack/precision/hardware/regime' &&
        b.key.includes(run.group.precision) &&
        b.key.includes('b200-power-limited'),
    );
    assert.equal(own, undefined, `${run.id}: too few runs of its own precision on that machine`);
    assert.equal(r.band.level, 'stack/hardware/regime', run.id);
    assert.equal(r.band.key, `torchtitan / b200-power-limited / ${r.band.regime}`);
    const machine = stored.bands.find((b) => b.key === r.band.key);
    assert.equal(r.band.half_width, machine.half_width);
    assert.equal(machine.runs, runs.filter((x) => x.split === 'heldout').length);
  }
});
