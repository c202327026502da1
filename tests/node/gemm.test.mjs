// The GEMM ladder in wasm: same products as the native build on the same inputs (within the
// k-scaled tolerance; SIMD widths differ, so sums are not bit-identical), and the measurement
// methods return finite positive numbers. Correctness only: speed is never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, nativeCall } from './engine.mjs';

const engine = await loadEngine();
const kernels = engine.call('gemm_kernels').kernels.map((k) => k.name);

test('wasm build reports the five kernels plus simd-relaxed (unavailable without its module) and the wasm-simd128 ISA without FMA', () => {
  assert.deepEqual(kernels, ['naive', 'ikj', 'blocked', 'packed', 'simd', 'simd-relaxed']);
  const info = engine.call('gemm_kernels');
  assert.deepEqual(
    info.kernels.map((k) => k.available),
    [true, true, true, true, true, false],
  );
  assert.equal(info.relaxed_simd, false);
  assert.equal(info.isa, 'wasm-simd128');
  assert.equal(info.fma, false);
  assert.ok(
    info.kernels.every((k) => !k.multithreaded),
    'no threads in wasm (no COOP/COEP on a static host)',
  );
});

// Shapes off every tile and block size (5 x 8 wasm, 12 x 32 AVX-512, 6 x 16 AVX2, kc 256).
const shapes = [
  [1, 1, 1],
  [7, 9, 11],
  [33, 47, 129],
  [70, 65, 400],
];

for (const name of ['naive', 'ikj', 'blocked', 'packed', 'simd']) {
  test(`${name}: wasm and native give the same C within the tolerance on odd shapes`, () => {
    for (const [m, n, k] of shapes) {
      const args = { m, n, k, kernel: name, seed: 11, entries: 200 };
      const wasm = engine.call('gemm_run', args);
      const native = JSON.parse(nativeCall('gemm_run', JSON.stringify(args)));
      assert.equal(native.ok, true, JSON.stringify(native));
      assert.equal(wasm.check.ok, true, `wasm ${name} ${m}x${n}x${k}: ${JSON.stringify(wasm.check)}`);
      assert.equal(native.result.check.ok, true);
      assert.equal(wasm.values.length, Math.min(200, m * n));
      const tol = 2 * Math.max(wasm.check.tolerance, native.result.check.tolerance);
      wasm.values.forEach((v, i) => {
        assert.ok(Number.isFinite(v));
        assert.ok(
          Math.abs(v - native.result.values[i]) <= tol,
          `${name} ${m}x${n}x${k} entry ${i}: wasm ${v} native ${native.result.values[i]} tol ${tol}`,
        );
      });
    }
  });
}

test('naive, ikj and blocked give bit-identical C in wasm and native (same operation order, no FMA contraction)', () => {
  // The first three rungs accumulate each entry in the same order in both builds, and the engine is
  // built with -ffp-contract=off, so even -march=native vectorization cannot change a single bit.
  for (const name of ['naive', 'ikj', 'blocked']) {
    const args = { m: 70, n: 65, k: 400, kernel: name, seed: 5, entries: 4096 };
    const wasm = engine.call('gemm_run', args);
    const native = JSON.parse(nativeCall('gemm_run', JSON.stringify(args))).result;
    assert.deepEqual(wasm.values, native.values, name);
    assert.equal(wasm.checksum, native.checksum, name);
  }
});

test('gemm_bench in wasm: every row finite, positive, correct, with an intensity', () => {
  const result = engine.call('gemm_bench', { n: [32, 48], kernel: 'all', reps: 2, warmup: 1, min_sample_ms: 1 });
  assert.equal(result.rows.length, 10);
  for (const row of result.rows) {
    assert.ok(Number.isFinite(row.flops_per_s) && row.flops_per_s > 0, JSON.stringify(row));
    assert.ok(row.flops_per_s_min <= row.flops_per_s && row.flops_per_s <= row.flops_per_s_max);
    assert.equal(row.correct, true);
    assert.ok(row.max_abs_err <= row.tolerance);
    assert.ok(row.intensity > 0);
  }
});

test('probes in wasm return finite positive rates', () => {
  const peak = engine.call('probe_peak', { samples: 2, min_sample_ms: 5 });
  assert.ok(Number.isFinite(peak.flops_per_s) && peak.flops_per_s > 0);
  assert.equal(peak.lanes, 4);
  const bw = engine.call('probe_bandwidth', { mib: 8, samples: 2 });
  assert.ok(Number.isFinite(bw.read_bytes_per_s) && bw.read_bytes_per_s > 0);
  assert.ok(Number.isFinite(bw.triad_bytes_per_s) && bw.triad_bytes_per_s > 0);
});

test('roofline ops are identical in wasm and native; so is the traffic model of kernels with the same tiling', () => {
  const args = { dtype: 'bf16', seq: 4096 };
  assert.deepEqual(engine.call('roofline', args), JSON.parse(nativeCall('roofline', JSON.stringify(args))).result);
  // packed and simd use the tile of their ISA (5 x 8 in wasm, 12 x 32 with AVX-512), so only the
  // first three rungs share a tiling across builds.
  const wasm = engine.call('gemm_intensity', { n: 2048 });
  const native = JSON.parse(nativeCall('gemm_intensity', JSON.stringify({ n: 2048 }))).result;
  for (const i of [0, 1, 2]) assert.deepEqual(wasm.rows[i], native.rows[i]);
});

test('bad input names the field in wasm as natively', () => {
  assert.throws(
    () => engine.call('gemm_bench', { n: 16, kernel: 'turbo' }),
    (e) => e.field === 'kernel',
  );
  assert.throws(
    () => engine.call('gemm_run', { m: 0, n: 4, k: 4, kernel: 'simd' }),
    (e) => e.field === 'm',
  );
});

test('probe_bandwidth releases its buffer: a second call does not grow the wasm heap, and over 256 MiB is refused', () => {
  // WebAssembly memory never shrinks, so the cap on mib is what bounds the page's heap.
  engine.call('probe_bandwidth', { mib: 16, samples: 1 });
  const heap = engine.module.HEAP8.length;
  engine.call('probe_bandwidth', { mib: 16, samples: 1 });
  engine.call('gemm_run', { m: 512, n: 512, k: 512, kernel: 'simd', entries: 1 });
  engine.call('probe_bandwidth', { mib: 16, samples: 1 });
  assert.equal(engine.module.HEAP8.length, heap);
  assert.throws(
    () => engine.call('probe_bandwidth', { mib: 1024 }),
    (e) => e.field === 'mib',
  );
  assert.throws(
    () => engine.call('gemm_bench', { n: 1024, kernel: 'naive' }),
    (e) => e.field === 'n',
  );
});
