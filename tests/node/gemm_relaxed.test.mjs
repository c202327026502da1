// The relaxed-SIMD kernel (engine/kernels/relaxed/gemm_relaxed.cpp -> tally-relaxed.wasm): a module in the final
// relaxed-SIMD encoding that browsers validate, safe to instantiate on the engine's memory, and whose C
// matches the double-precision reference within its own bound. Node 20's V8 validates relaxed SIMD only
// behind a flag, set here before any module is compiled. Correctness only: speed is never asserted.
import v8 from 'node:v8';
import { test } from 'node:test';
import assert from 'node:assert/strict';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const { loadEngine, loadRelaxedEngine, relaxedBytes } = await import('./engine.mjs');

// Section ids of a wasm binary, in order (id 0 custom sections are skipped).
function sections(bytes) {
  const ids = [];
  let i = 8;
  while (i < bytes.length) {
    const id = bytes[i++];
    let size = 0,
      shift = 0,
      byte;
    do {
      byte = bytes[i++];
      size |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (id !== 0) ids.push(id);
    i += size;
  }
  return ids;
}

test('tally-relaxed.wasm uses the final relaxed-SIMD encoding (f32x4.relaxed_madd = 0xfd 0x85 0x02) and validates', () => {
  const bytes = relaxedBytes();
  assert.equal(WebAssembly.validate(bytes), true);
  const hex = Buffer.from(bytes).toString('hex');
  assert.ok(hex.includes('fd8502'), 'the final opcode of f32x4.relaxed_madd is present');
  assert.ok(!hex.includes('fdaf01'), 'no pre-standard relaxed fma opcode (0xfd 0xaf 0x01), which browsers reject');
});

test("tally-relaxed.wasm imports only memory and has no data segment (it never writes into the engine's static data)", () => {
  const module = new WebAssembly.Module(relaxedBytes());
  assert.deepEqual(WebAssembly.Module.imports(module), [{ module: 'env', name: 'memory', kind: 'memory' }]);
  assert.ok(!sections(relaxedBytes()).includes(11), 'no data section');
  assert.deepEqual(
    WebAssembly.Module.exports(module)
      .map((e) => e.name)
      .sort(),
    ['gemm', 'gemm_workspace_floats', 'peak_flops_per_iter', 'peak_loop'],
  );
});

const relaxed = await loadRelaxedEngine();
// Shapes off the 6 x 8 tile and the kc = 256 block, a stripe of rows, and one over two kc blocks.
const shapes = [
  [1, 1, 1],
  [7, 9, 11],
  [33, 47, 129],
  [70, 65, 400],
  [13, 256, 300],
  [120, 130, 513],
];

test('simd-relaxed: C matches the double-precision reference within the fused dot-product bound k u sum|a b| on odd shapes', () => {
  for (const [m, n, k] of shapes) {
    const run = relaxed.call('gemm_run', { m, n, k, kernel: 'simd-relaxed', seed: 11, entries: 0 });
    assert.equal(run.check.ok, true, `${m}x${n}x${k}: ${JSON.stringify(run.check)}`);
    assert.equal(run.check.checked_entries, m * n, 'every entry checked');
    // The engine's tolerance is 2 k u sum|a b| (gamma_k with a factor 2 of slack); one rounding per
    // multiply-add (or two, where a CPU lacks FMA and V8 splits relaxed_madd) stays within half of it.
    assert.ok(run.check.worst_error_over_tolerance <= 0.5, `${m}x${n}x${k}: ${run.check.worst_error_over_tolerance}`);
  }
});

test('simd-relaxed and simd give different last bits on the same inputs (the relaxed kernel really rounds differently)', () => {
  const args = { m: 70, n: 65, k: 400, seed: 5, entries: 4096 };
  const fused = relaxed.call('gemm_run', { ...args, kernel: 'simd-relaxed' });
  const plain = relaxed.call('gemm_run', { ...args, kernel: 'simd' });
  assert.equal(plain.check.ok, true);
  const differing = fused.values.filter((v, i) => v !== plain.values[i]).length;
  assert.ok(differing > 0, 'some entries differ');
  fused.values.forEach((v, i) => assert.ok(Math.abs(v - plain.values[i]) <= 2 * fused.check.tolerance, `entry ${i}`));
});

test('gemm_bench with m: a stripe of C (m rows of n x n) is timed, checked, and counted as 2 m n n FLOPs', () => {
  const result = relaxed.call('gemm_bench', {
    n: 96,
    m: 30,
    kernel: 'simd,simd-relaxed',
    reps: 2,
    warmup: 1,
    min_sample_ms: 1,
  });
  assert.deepEqual(
    result.rows.map((r) => [r.kernel, r.m, r.n]),
    [
      ['simd', 30, 96],
      ['simd-relaxed', 30, 96],
    ],
  );
  for (const row of result.rows) {
    assert.equal(row.flops, 2 * 30 * 96 * 96);
    assert.equal(row.correct, true);
    assert.ok(Number.isFinite(row.flops_per_s) && row.flops_per_s > 0);
  }
  const all = relaxed.call('gemm_bench', { n: 32, kernel: 'all', reps: 1, warmup: 1, min_sample_ms: 1 });
  assert.ok(
    all.rows.some((r) => r.kernel === 'simd-relaxed'),
    'kernel all includes simd-relaxed once the module is attached',
  );
});

test('probe_peak variant relaxed times f32x4.relaxed_madd chains and reports FMA', () => {
  const peak = relaxed.call('probe_peak', { variant: 'relaxed', samples: 2, min_sample_ms: 2 });
  assert.equal(peak.isa, 'wasm-simd128+relaxed-madd');
  assert.equal(peak.fma, true);
  assert.ok(Number.isFinite(peak.flops_per_s) && peak.flops_per_s > 0);
});

test('without the module, simd-relaxed and variant relaxed are input errors naming the field, never a trap', async () => {
  const plain = await loadEngine();
  assert.throws(
    () => plain.call('gemm_run', { m: 8, n: 8, k: 8, kernel: 'simd-relaxed' }),
    (e) => e.field === 'kernel' && /relaxed-SIMD module/.test(e.message),
  );
  assert.throws(
    () => plain.call('gemm_bench', { n: 8, kernel: 'simd-relaxed' }),
    (e) => e.field === 'kernel',
  );
  assert.throws(
    () => plain.call('probe_peak', { variant: 'relaxed' }),
    (e) => e.field === 'variant',
  );
  assert.throws(
    () => plain.call('probe_peak', { variant: 'fast' }),
    (e) => e.field === 'variant' && /simd.*relaxed/.test(e.message),
  );
  assert.equal(plain.call('gemm_run', { m: 8, n: 8, k: 8, kernel: 'simd' }).check.ok, true, 'the engine still answers');
});
