// `tally step --validate --runs FILE` over content/validation/runs-modern.json (issue 24): the report's halves
// partition the runs (predicted or skipped as not expressible), each error is (predicted - published) / published
// with the metric mapped from step_time's result, and the per-half summaries are the rows' own statistics.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { declaredOnly, nativeCall, nativeCli, nativeRun, root } from './engine.mjs';

const file = path.join(root, 'content/validation/runs-modern.json');
const data = JSON.parse(readFileSync(file, 'utf8'));
const report = JSON.parse(nativeRun(['step', '--validate', '--runs', file, '--json']));

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

test('the halves partition the runs: each run is predicted or skipped once, in its own half', () => {
  const seen = new Map();
  for (const row of report.runs) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
  for (const row of report.skipped) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
  assert.equal(seen.size, data.runs.length);
  for (const run of data.runs) {
    assert.equal(seen.get(run.id), 1, `${run.id} appears once`);
    const row = report.runs.find((r) => r.id === run.id) ?? report.skipped.find((r) => r.id === run.id);
    assert.equal(row.half, run.split, `${run.id} is in its split`);
    assert.equal(
      report.skipped.some((r) => r.id === run.id),
      run.expressible_today === false,
      `${run.id} is skipped exactly when it is not expressible today`,
    );
  }
  assert.deepEqual(Object.keys(report.halves).sort(), ['fit', 'heldout']);
  for (const [half, summary] of Object.entries(report.halves)) {
    const rows = report.runs.filter((r) => r.half === half);
    assert.equal(summary.count, rows.length, half);
    assert.equal(summary.skipped_not_expressible, report.skipped.filter((r) => r.half === half).length, half);
    const errors = rows.map((r) => Math.abs(r.error));
    assert.equal(summary.median_abs_error, median(errors), `${half} median`);
    assert.equal(summary.worst_abs_error, Math.max(...errors), `${half} worst`);
    assert.equal(
      summary.within_20_percent,
      errors.filter((e) => e <= 0.2).length / errors.length,
      `${half} within 20 %`,
    );
    const groupCounts = Object.values(summary.groups).reduce((sum, g) => sum + g.count, 0);
    assert.equal(groupCounts, rows.length, `${half}: the groups partition the half`);
  }
});

test("a run's error is (predicted - published) / published, with the metric mapped from step_time", () => {
  const metrics = new Set();
  for (const row of report.runs) {
    if (metrics.has(row.metric)) continue;
    metrics.add(row.metric);
    const run = data.runs.find((r) => r.id === row.id);
    const result = JSON.parse(nativeCall('step_time', JSON.stringify(declaredOnly('step_time', run.args)))).result;
    const predicted = {
      tokens_per_s_per_gpu: result.tokens_per_second / run.args.gpus,
      tflops_per_gpu: result.model_flops_per_s_per_gpu / 1e12,
      mfu: result.mfu,
    }[row.metric];
    assert.equal(row.published, run.published.value, row.id);
    assert.equal(row.predicted, predicted, `${row.id}: ${row.metric}`);
    assert.equal(row.error, (predicted - run.published.value) / run.published.value, row.id);
  }
  assert.deepEqual([...metrics].sort(), ['mfu', 'tflops_per_gpu', 'tokens_per_s_per_gpu']);
});

test('--runs with a missing file is an error naming --validate', () => {
  let failure;
  try {
    execFileSync(nativeCli, ['step', '--validate', '--runs', path.join(root, 'content/validation/none.json')], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (error) {
    failure = error;
  }
  assert.equal(failure?.status, 2);
  assert.match(failure.stderr + failure.stdout, /--validate/);
});
