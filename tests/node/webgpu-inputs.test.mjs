// The WebGPU GEMM's host side (web/widgets/webgpu-gemm.js) in node, no GPU needed: its inputs are the engine's
// fill_uniform values bit for bit (checked through gemm_run with k = 1, where each entry of C is one exactly
// rounded product), its f32 -> f16 conversion rounds to nearest even over every binary16 value, and the error
// bounds are the engine's rule for f32. The GPU side runs in tests/browser/webgpu.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';
import { fillUniform, f16Bits, f16Value, gpuErrorBound, UNIT_ROUNDOFF } from '../../web/widgets/webgpu-gemm.js';

const engine = await loadEngine();

test("fillUniform gives the engine's inputs: A's and B's values through k = 1 products", () => {
  for (const seed of [1, 7, 123456789]) {
    // m = 1, k = 1: C[j] = A[0] · B[j], with B = fill_uniform(seed + 1); one f32 rounding of an exact product.
    const n = 4096;
    const rowC = engine.call('gemm_run', { m: 1, n, k: 1, kernel: 'naive', seed, entries: n }).values;
    const a = fillUniform(1, seed);
    const b = fillUniform(n, seed + 1);
    assert.deepEqual(
      rowC,
      [...b].map((v) => Math.fround(a[0] * v)),
      `B of seed ${seed + 1}`,
    );
    // n = 1, k = 1: C[i] = A[i] · B[0].
    const colC = engine.call('gemm_run', { m: n, n: 1, k: 1, kernel: 'naive', seed, entries: n }).values;
    const aa = fillUniform(n, seed);
    assert.deepEqual(
      colC,
      [...aa].map((v) => Math.fround(v * b[0])),
      `A of seed ${seed}`,
    );
    for (const v of aa) assert.ok(v >= -1 && v < 1 && Number.isInteger(v * 2 ** 23));
  }
});

test('f16Bits rounds to nearest even: every binary16 value round-trips, midpoints go to the even neighbour', () => {
  for (let bits = 0; bits < 0x10000; bits++) {
    const exp = (bits >>> 10) & 0x1f;
    if (exp === 0x1f) continue; // infinities and NaNs: not inputs here
    const v = f16Value(bits);
    if (v === 0) continue;
    assert.equal(f16Bits(v), bits, `0x${bits.toString(16)}`);
    // The midpoint to the next magnitude goes to whichever of the two has an even last bit.
    const next = bits + 1;
    if (((next >>> 10) & 0x1f) === 0x1f) continue;
    const mid = (v + f16Value(next)) / 2;
    if (Math.fround(mid) !== mid) continue; // not exactly representable in f32
    assert.equal(f16Bits(mid), bits & 1 ? next : bits, `midpoint above 0x${bits.toString(16)}`);
  }
  assert.equal(f16Bits(0), 0);
  assert.equal(f16Bits(-0), 0x8000);
  assert.equal(f16Bits(1e6), 0x7c00, 'overflow to infinity');
  assert.equal(f16Bits(2 ** -26), 0, 'below half the smallest subnormal: zero');
});

test("the f32 bound is the engine's 2 k u; f16's adds input rounding and per-slab f16 sums", () => {
  assert.deepEqual(gpuErrorBound('f32', 1024), { relative: 2 * 1024 * UNIT_ROUNDOFF.f32, absolute: 0 });
  const f16 = gpuErrorBound('f16', 1024, { wx: 8, wy: 8, rm: 4, rn: 4, bk: 32 });
  assert.equal(f16.relative, 2 * ((2 + 33) * 2 ** -11 + 32 * 2 ** -24));
  assert.ok(f16.absolute > 0);
});
