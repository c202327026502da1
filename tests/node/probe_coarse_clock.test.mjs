// A page that is not cross-origin isolated reads performance.now() in 100 us steps. The probes must
// still report finite rates when one pass over an in-cache buffer takes less than one step (the
// cross-origin embed test once stopped with "triad_gbs is not a finite number (inf)").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';

// Emscripten's node clock reads process.hrtime() on every call; quantise it (100 us unless a test
// coarsens it further) for this file.
const realHrtime = process.hrtime;
let quantumNs = 1e5;
process.hrtime = (previous) => {
  const [seconds, nanoseconds] = realHrtime(previous);
  return [seconds, Math.floor(nanoseconds / quantumNs) * quantumNs];
};

test('with a 100 us clock, the bandwidth probe over a 1 MiB (in-cache) buffer reports finite positive bytes/s', async () => {
  const { call } = await loadEngine();
  const r = await call('probe_bandwidth', { mib: 1, samples: 5 });
  for (const key of [
    'read_bytes_per_s',
    'read_bytes_per_s_min',
    'read_bytes_per_s_max',
    'triad_bytes_per_s',
    'triad_bytes_per_s_min',
    'triad_bytes_per_s_max',
  ]) {
    assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`);
  }
  assert.ok(r.triad_bytes_per_s_min <= r.triad_bytes_per_s && r.triad_bytes_per_s <= r.triad_bytes_per_s_max);
});

test('with a 100 us clock, the peak probe at its shortest sample (1 ms) reports finite positive FLOP/s', async () => {
  const { call } = await loadEngine();
  const r = await call('probe_peak', { samples: 5, min_sample_ms: 1 });
  for (const key of ['flops_per_s', 'flops_per_s_min', 'flops_per_s_max', 'seconds_per_sample']) {
    assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`);
  }
});

test('with a 5 ms clock (a calibration that a busy machine cut short), gemm_bench rows are finite and positive', async (t) => {
  // The calibration stops at the first interval of >= 1 ms, i.e. the first tick crossed, which can
  // come after a few calls: samples of that many calls then time as 0 s unless each sample extends itself.
  quantumNs = 5e6;
  t.after(() => {
    quantumNs = 1e5;
  });
  const { call } = await loadEngine();
  const r = await call('gemm_bench', { n: [32], kernel: 'blocked', reps: 5, warmup: 1, min_sample_ms: 1 });
  for (const row of r.rows) {
    assert.ok(
      Number.isFinite(row.flops_per_s) && row.flops_per_s > 0,
      `${row.kernel} n=${row.n}: flops_per_s = ${row.flops_per_s}`,
    );
  }
});
