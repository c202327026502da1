// The reader's own GPU through WebGPU: a tiled GEMM in WGSL (f32, and f16 where the adapter has `shader-f16`), a
// streaming-copy bandwidth probe, and the check of the GEMM against the engine's CPU GEMM (gemm_run) on the same
// deterministic inputs. Nothing here runs at import: the roofline widget (roofline.js) calls it when the reader
// asks, and the benchmark (scripts/bench/bench-webgpu-gemm.mjs) drives the same functions.
//
// Timing is wall-clock from the page: a sample encodes `calls` dispatches in one command buffer, submits it and
// waits for queue.onSubmittedWorkDone(); `calls` is calibrated so a sample lasts at least min_sample_ms, and the
// rate is the median of the samples (the rule of the engine's gemm_bench). No timestamp queries: they are an
// optional feature, and a browser may quantize them.
import { webgpuAbsence } from './webgpu-absence.js';

export { webgpuAbsence };

/** Unit roundoff of each format the GEMM stores its inputs in (round to nearest). */
export const UNIT_ROUNDOFF = { f32: 2 ** -24, f16: 2 ** -11 };

/**
 * The GEMM's tiling: a workgroup of wx × wy invocations computes a (wy·rm) × (wx·rn) block of C; each invocation
 * keeps an rm × rn register tile (rn a multiple of 4: vec4 columns); the k loop steps bk at a time through
 * workgroup-shared copies of A's and B's slabs (one barrier pair per slab). f16 sums each slab in f16 and adds it
 * to f32 accumulators.
 */
export const DEFAULT_TILING = { wx: 8, wy: 8, rm: 4, rn: 4, bk: 32 };

/** The adapter's name as the browser gives it ("" when it gives none), from GPUAdapterInfo. */
export function adapterName(info) {
  if (!info) return '';
  const parts = [info.description, [info.vendor, info.architecture].filter(Boolean).join(' '), info.device];
  return parts.find((p) => p && String(p).trim())?.trim() ?? '';
}

/**
 * Opens the GPU: {adapter, device, info, name, f16, limits} or throws an Error whose message says why not.
 * `powerPreference` "high-performance" asks for the discrete GPU where there are two.
 */
export async function openGpu({ powerPreference = 'high-performance' } = {}) {
  const absent = webgpuAbsence();
  if (absent) throw new Error(absent);
  const adapter = await navigator.gpu.requestAdapter({ powerPreference });
  if (!adapter)
    throw new Error(
      'The browser offers WebGPU but gave no adapter (no usable GPU, a blocklisted driver, or GPU access turned off).',
    );
  const f16 = adapter.features.has('shader-f16');
  const wanted = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize'];
  const requiredLimits = Object.fromEntries(wanted.map((key) => [key, adapter.limits[key]]));
  const device = await adapter.requestDevice({ requiredFeatures: f16 ? ['shader-f16'] : [], requiredLimits });
  const info = adapter.info ?? (await adapter.requestAdapterInfo?.()) ?? {};
  const plain = {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
  };
  return { adapter, device, info: plain, name: adapterName(plain), f16, limits: device.limits };
}

// ---------------------------------------------------------------- inputs: the engine's fill_uniform, bit for bit

/**
 * The engine's deterministic inputs (engine/kernels/gemm.cpp fill_uniform): xorshift64 from
 * seed · 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D, 24 random bits per value, (bits − 2²³) · 2⁻²³ in [−1, 1).
 * The 64-bit state is kept as two 32-bit halves (BigInt per value would take seconds at n = 1024).
 */
export function fillUniform(count, seed) {
  const mask = (1n << 64n) - 1n;
  let state = (BigInt(seed) * 0x9e3779b97f4a7c15n + 0x2545f4914f6cdd1dn) & mask;
  if (state === 0n) state = 1n;
  let hi = Number(state >> 32n) >>> 0;
  let lo = Number(state & 0xffffffffn) >>> 0;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    // state ^= state << 13
    hi = (hi ^ ((hi << 13) | (lo >>> 19))) >>> 0;
    lo = (lo ^ (lo << 13)) >>> 0;
    // state ^= state >> 7
    lo = (lo ^ ((lo >>> 7) | (hi << 25))) >>> 0;
    hi = (hi ^ (hi >>> 7)) >>> 0;
    // state ^= state << 17
    hi = (hi ^ ((hi << 17) | (lo >>> 15))) >>> 0;
    lo = (lo ^ (lo << 17)) >>> 0;
    const bits = hi >>> 8; // state >> 40
    out[i] = (bits - 0x800000) * 2 ** -23;
  }
  return out;
}

// ---------------------------------------------------------------- f16 conversion (for the f16 GEMM's inputs)

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** The IEEE binary16 bits of `value`, rounded to nearest even (inputs here are in [−1, 1): no overflow). */
export function f16Bits(value) {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // subnormal in f16 (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && half & 1)) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half += 1; // a carry into the exponent is still right
  return sign | half;
}

/** The value of binary16 bits. */
export function f16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// ---------------------------------------------------------------- WGSL

/** The WGSL of the tiled GEMM for `dtype` ("f32" | "f16") and tiling; C = A · B, all row-major, sizes padded. */
export function gemmWgsl(dtype, tiling = DEFAULT_TILING) {
  const { wx, wy, rm, rn, bk } = tiling;
  if (rn % 4 || bk % 4) throw new Error('rn and bk must be multiples of 4');
  const t = dtype === 'f16' ? 'f16' : 'f32';
  const bm = wy * rm; // rows of C per workgroup
  const bn4 = (wx * rn) / 4; // vec4 columns of C per workgroup
  const cols = rn / 4; // vec4 columns per invocation
  const threads = wx * wy;
  // Shared slabs: As holds bk × bm of A transposed (k-major, so an invocation's rm values of one k are adjacent),
  // Bs holds bk × bn4 vec4s of B.
  const aLoads = Math.ceil((bm * bk) / 4 / threads); // vec4 loads of A per invocation and slab
  const bLoads = Math.ceil((bk * bn4) / threads);
  const accType = 'vec4<f32>';
  const lines = [];
  if (t === 'f16') lines.push('enable f16;');
  lines.push(
    `struct Dims { m: u32, n4: u32, k: u32, k4: u32 }`,
    `@group(0) @binding(0) var<storage, read> A: array<vec4<${t}>>;`,
    `@group(0) @binding(1) var<storage, read> B: array<vec4<${t}>>;`,
    `@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;`,
    `@group(0) @binding(3) var<uniform> dims: Dims;`,
    `var<workgroup> As: array<${t}, ${bk * bm}>;`,
    `var<workgroup> Bs: array<vec4<${t}>, ${bk * bn4}>;`,
    `@compute @workgroup_size(${wx}, ${wy})`,
    `fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {`,
    `  let row0 = wg.y * ${bm}u;`,
    `  let col0 = wg.x * ${bn4}u;`,
  );
  for (let r = 0; r < rm; r++) for (let c = 0; c < cols; c++) lines.push(`  var acc${r}_${c} = ${accType}(0.0);`);
  lines.push(`  for (var k0 = 0u; k0 < dims.k; k0 = k0 + ${bk}u) {`);
  // A's slab: bm rows × bk columns, read as vec4 along k, stored transposed.
  for (let l = 0; l < aLoads; l++) {
    lines.push(
      `    {`,
      `      let e = li + ${l * threads}u;`,
      ...(aLoads * threads * 4 > bm * bk ? [`      if (e < ${(bm * bk) / 4}u) {`] : [`      {`]),
      `      let r = e / ${bk / 4}u;`,
      `      let kq = e % ${bk / 4}u;`,
      `      let v = A[(row0 + r) * dims.k4 + k0 / 4u + kq];`,
      `      As[(kq * 4u) * ${bm}u + r] = v.x;`,
      `      As[(kq * 4u + 1u) * ${bm}u + r] = v.y;`,
      `      As[(kq * 4u + 2u) * ${bm}u + r] = v.z;`,
      `      As[(kq * 4u + 3u) * ${bm}u + r] = v.w;`,
      `      }`,
      `    }`,
    );
  }
  for (let l = 0; l < bLoads; l++) {
    lines.push(
      `    {`,
      `      let e = li + ${l * threads}u;`,
      ...(bLoads * threads > bk * bn4 ? [`      if (e < ${bk * bn4}u) {`] : [`      {`]),
      `      let kk = e / ${bn4}u;`,
      `      let c = e % ${bn4}u;`,
      `      Bs[e] = B[(k0 + kk) * dims.n4 + col0 + c];`,
      `      }`,
      `    }`,
    );
  }
  lines.push(`    workgroupBarrier();`);
  if (t === 'f16') {
    // One slab summed in f16, then added to the f32 accumulators.
    for (let r = 0; r < rm; r++) for (let c = 0; c < cols; c++) lines.push(`    var s${r}_${c} = vec4<f16>(0.0h);`);
  }
  const target = (r, c) => (t === 'f16' ? `s${r}_${c}` : `acc${r}_${c}`);
  lines.push(`    for (var kk = 0u; kk < ${bk}u; kk = kk + 1u) {`);
  for (let c = 0; c < cols; c++) lines.push(`      let b${c} = Bs[kk * ${bn4}u + lid.x + ${c * wx}u];`);
  for (let r = 0; r < rm; r++) {
    lines.push(`      let a${r} = As[kk * ${bm}u + lid.y * ${rm}u + ${r}u];`);
    for (let c = 0; c < cols; c++) lines.push(`      ${target(r, c)} = ${target(r, c)} + a${r} * b${c};`);
  }
  lines.push(`    }`);
  if (t === 'f16')
    for (let r = 0; r < rm; r++)
      for (let c = 0; c < cols; c++) lines.push(`    acc${r}_${c} = acc${r}_${c} + vec4<f32>(s${r}_${c});`);
  lines.push(`    workgroupBarrier();`, `  }`);
  // Invocation (lid.x, lid.y) owns rows lid.y·rm + r and vec4 columns lid.x + c·wx (strided, so the workgroup's
  // reads of Bs and writes of C are contiguous across invocations).
  for (let r = 0; r < rm; r++)
    for (let c = 0; c < cols; c++)
      lines.push(`  C[(row0 + lid.y * ${rm}u + ${r}u) * dims.n4 + col0 + lid.x + ${c * wx}u] = acc${r}_${c};`);
  lines.push(`}`);
  return lines.join('\n');
}

/** The streaming copy of the bandwidth probe: each invocation copies `per` vec4s, grid-strided. */
export function copyWgsl(workgroup = 256, per = 4) {
  return [
    `@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;`,
    `@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;`,
    `@compute @workgroup_size(${workgroup})`,
    `fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {`,
    `  let stride = groups.x * ${workgroup}u;`,
    `  let total = arrayLength(&src);`,
    `  for (var j = 0u; j < ${per}u; j = j + 1u) {`,
    `    let i = gid.x + j * stride;`,
    `    if (i < total) { dst[i] = src[i]; }`,
    `  }`,
    `}`,
  ].join('\n');
}

// ---------------------------------------------------------------- timing

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * The timing rule: `run(calls)` does `calls` calls and resolves to the seconds they took; after `warmup` single
 * calls, calls per sample are calibrated (at most 1024) so a sample lasts at least minSampleMs, then `reps`
 * samples: {median_s, min_s, max_s, calls, samples} per call. `shouldStop()` aborts between samples. The benchmark
 * times tfjs's matMul by this same rule.
 */
export async function timeSamples(run, { reps = 5, warmup = 2, minSampleMs = 20, shouldStop = () => false } = {}) {
  for (let i = 0; i < warmup; i++) await run(1);
  let calls = 1;
  let seconds = await run(calls);
  while (seconds * 1000 < minSampleMs && calls < 1024) {
    if (shouldStop()) throw new Error('stopped');
    calls = Math.min(1024, calls * Math.max(2, Math.ceil(minSampleMs / 1000 / Math.max(seconds, 1e-6) / 1.5)));
    seconds = await run(calls);
  }
  const perCall = [];
  for (let i = 0; i < reps; i++) {
    if (shouldStop()) throw new Error('stopped');
    perCall.push((await run(calls)) / calls);
  }
  return { median_s: median(perCall), min_s: Math.min(...perCall), max_s: Math.max(...perCall), calls, samples: reps };
}

/** `encode(pass)` (one dispatch) timed by timeSamples: a sample is one command buffer of `calls` dispatches. */
function timeDispatch(device, encode, options) {
  return timeSamples(async (calls) => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    for (let i = 0; i < calls; i++) encode(pass);
    pass.end();
    const t0 = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) / 1000;
  }, options);
}

// ---------------------------------------------------------------- the GEMM

const roundUp = (x, m) => Math.ceil(x / m) * m;

/** Compute pipelines by device and WGSL source: compiled once (a software adapter takes seconds per compile). */
const pipelines = new WeakMap();
function cachedPipeline(device, code) {
  if (!pipelines.has(device)) pipelines.set(device, new Map());
  const byCode = pipelines.get(device);
  if (!byCode.has(code)) {
    const module = device.createShaderModule({ code });
    byCode.set(code, device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } }));
  }
  return byCode.get(code);
}

/**
 * A GEMM of n × n × n on the GPU in `dtype`: inputs from fillUniform (seed, seed + 1, as the engine's gemm_run),
 * padded with zeros to whole tiles. Returns {run(options) -> timing, readC() -> Float32Array of the n × n C,
 * destroy()}.
 */
export function prepareGemm(gpu, { n, dtype = 'f32', seed = 1, tiling = DEFAULT_TILING }) {
  const { device } = gpu;
  if (dtype === 'f16' && !gpu.f16) throw new Error('this adapter has no shader-f16');
  const bm = tiling.wy * tiling.rm;
  const bn = tiling.wx * tiling.rn;
  const M = roundUp(n, bm);
  const N = roundUp(n, bn);
  const K = roundUp(n, tiling.bk);
  const a = fillUniform(n * n, seed);
  const b = fillUniform(n * n, seed + 1);
  const padded = (src, rows, cols) => {
    const out = dtype === 'f16' ? new Uint16Array(rows * cols) : new Float32Array(rows * cols);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) out[i * cols + j] = dtype === 'f16' ? f16Bits(src[i * n + j]) : src[i * n + j];
    return out;
  };
  const upload = (data, usage = GPUBufferUsage.STORAGE) => {
    const buffer = device.createBuffer({ size: roundUp(data.byteLength, 16), usage: usage | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  };
  const bufA = upload(padded(a, M, K));
  const bufB = upload(padded(b, K, N));
  const bytesC = M * N * 4;
  const bufC = device.createBuffer({ size: bytesC, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const dims = upload(new Uint32Array([M, N / 4, K, K / 4]), GPUBufferUsage.UNIFORM);
  const pipeline = cachedPipeline(device, gemmWgsl(dtype, tiling));
  const bind = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [bufA, bufB, bufC, dims].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const groups = [N / bn, M / bm];
  const encode = (pass) => {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...groups);
  };
  return {
    n,
    dtype,
    seed,
    a,
    b,
    padded: { M, N, K },
    run: (options = {}) => timeDispatch(device, encode, options),
    /** Runs once and reads C back: the n × n product as f32. */
    async readC() {
      const read = device.createBuffer({ size: bytesC, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      encode(pass);
      pass.end();
      encoder.copyBufferToBuffer(bufC, 0, read, 0, bytesC);
      device.queue.submit([encoder.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const all = new Float32Array(read.getMappedRange().slice(0));
      read.destroy();
      const c = new Float32Array(n * n);
      for (let i = 0; i < n; i++) c.set(all.subarray(i * N, i * N + n), i * n);
      return c;
    },
    destroy() {
      for (const buffer of [bufA, bufB, bufC, dims]) buffer.destroy();
    },
  };
}

/**
 * The error bound of one entry of C computed in `dtype` on the GPU, as a multiple of Σₚ |aᵢₚ bₚⱼ| (the f32 inputs'
 * products), plus an absolute part: {relative, absolute}. f32: the engine's rule, 2 k u (the γₖ bound with a
 * factor 2 of slack). f16: each input rounded to f16 (2u₁₆ on a product), each slab of bk terms summed in f16
 * ((bk + 1) u₁₆), the k/bk slab sums added in f32 (k/bk · u₃₂), with the same factor 2; plus 2⁻²⁵ per operation
 * for f16's gradual underflow (products below 2⁻¹⁴ lose absolute, not relative, precision).
 */
export function gpuErrorBound(dtype, k, tiling = DEFAULT_TILING) {
  const u32 = UNIT_ROUNDOFF.f32;
  if (dtype !== 'f16') return { relative: 2 * k * u32, absolute: 0 };
  const u16 = UNIT_ROUNDOFF.f16;
  const slabs = Math.ceil(k / tiling.bk);
  return { relative: 2 * ((2 + tiling.bk + 1) * u16 + slabs * u32), absolute: 2 * k * 2 ** -25 };
}

/**
 * Checks the GPU's C against the engine's CPU GEMM on the same inputs: `engine.call('gemm_run', {m, n, k, kernel,
 * seed, entries})` gives the first entries of its C and the sum of all of them. Each compared entry must be within
 * the GPU's bound plus the CPU kernel's (2 k u₃₂, the engine's own check), per entry's Σ|a b|; the sums within
 * the sum of every entry's bound (Σᵢⱼ Σₚ |aᵢₚ||bₚⱼ| = Σₚ (Σᵢ|aᵢₚ|)(Σⱼ|bₚⱼ|)). Returns {ok, compared, max_abs_err,
 * worst_ratio, tolerance (at the worst entry), checksum_gpu, checksum_cpu, checksum_tolerance, cpu_kernel}.
 */
export function checkAgainstEngine(engine, gemm, c, { kernel = 'simd', entries = 4096, tiling = DEFAULT_TILING } = {}) {
  const { n, a, b, dtype } = gemm;
  const count = Math.min(entries, n * n);
  const ref = engine.call('gemm_run', { m: n, n, k: n, kernel, seed: gemm.seed ?? 1, entries: count });
  const gpuBound = gpuErrorBound(dtype, n, tiling);
  const cpuRelative = 2 * n * UNIT_ROUNDOFF.f32;
  let maxErr = 0,
    worst = 0,
    worstTol = 0,
    ok = true;
  for (let e = 0; e < count; e++) {
    const i = Math.floor(e / n),
      j = e % n;
    let magnitude = 0;
    for (let p = 0; p < n; p++) magnitude += Math.abs(a[i * n + p] * b[p * n + j]);
    const tolerance = (gpuBound.relative + cpuRelative) * magnitude + gpuBound.absolute + 1e-30;
    const error = Math.abs(c[e] - ref.values[e]);
    if (!Number.isFinite(c[e]) || !(error <= tolerance)) ok = false;
    maxErr = Math.max(maxErr, Number.isFinite(error) ? error : Infinity);
    const ratio = error / tolerance;
    if (ratio > worst || e === 0) ((worst = ratio), (worstTol = tolerance));
  }
  // The whole of C through its sum.
  const colAbs = new Float64Array(n),
    rowAbs = new Float64Array(n);
  for (let i = 0; i < n; i++) for (let p = 0; p < n; p++) colAbs[p] += Math.abs(a[i * n + p]);
  for (let p = 0; p < n; p++) for (let j = 0; j < n; j++) rowAbs[p] += Math.abs(b[p * n + j]);
  let totalMagnitude = 0;
  for (let p = 0; p < n; p++) totalMagnitude += colAbs[p] * rowAbs[p];
  let checksum = 0,
    finite = true;
  for (let e = 0; e < n * n; e++) {
    checksum += c[e];
    if (!Number.isFinite(c[e])) finite = false;
  }
  const checksumTolerance = (gpuBound.relative + cpuRelative) * totalMagnitude + gpuBound.absolute * n * n + 1e-30;
  const checksumOk = finite && Math.abs(checksum - ref.checksum) <= checksumTolerance;
  return {
    ok: ok && checksumOk && ref.check?.ok !== false,
    compared: count,
    max_abs_err: maxErr,
    worst_ratio: worst,
    tolerance: worstTol,
    checksum_gpu: checksum,
    checksum_cpu: ref.checksum,
    checksum_tolerance: checksumTolerance,
    cpu_kernel: ref.kernel,
  };
}

/**
 * Measures the GEMM at size n in dtype: {dtype, n, flops, bytes, intensity, flops_per_s (median, _min, _max),
 * median_s, calls, samples, check} with the check against the engine when `engine` is given.
 * Intensity: the compulsory traffic (A and B read once, C written once), as the roofline places a matmul.
 */
export async function measureGemm(gpu, { n, dtype = 'f32', engine = null, tiling = DEFAULT_TILING, ...timing }) {
  const gemm = prepareGemm(gpu, { n, dtype, tiling });
  try {
    const t = await gemm.run(timing);
    const check = engine ? checkAgainstEngine(engine, gemm, await gemm.readC(), { tiling }) : null;
    const flops = 2 * n ** 3;
    const elementBytes = dtype === 'f16' ? 2 : 4;
    const bytes = 2 * n * n * elementBytes + n * n * 4;
    return {
      kind: 'gemm',
      dtype,
      n,
      flops,
      bytes,
      intensity: flops / bytes,
      flops_per_s: flops / t.median_s,
      flops_per_s_min: flops / t.max_s,
      flops_per_s_max: flops / t.min_s,
      median_s: t.median_s,
      calls: t.calls,
      samples: t.samples,
      tiling,
      check,
    };
  } finally {
    gemm.destroy();
  }
}

/**
 * The bandwidth probe: a streaming copy of `mib` MiB (clamped to the device's binding limit) from one buffer to
 * another; bytes moved = 2 × the buffer (read + write, as STREAM's copy counts). {bytes, bytes_per_s (median,
 * _min, _max), median_s, calls, samples, verified} where `verified` says the destination held the source's last
 * words after the run.
 */
export async function measureBandwidth(gpu, { mib = 256, ...timing } = {}) {
  const { device } = gpu;
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const size = Math.max(1 << 20, Math.min(mib * 2 ** 20, Math.floor(limit / 16) * 16));
  const src = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const dst = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  try {
    // A recognisable tail, to confirm the copy ran to the end.
    const tail = new Uint32Array(256).map((_, i) => 0x9e3779b9 ^ i);
    device.queue.writeBuffer(src, size - tail.byteLength, tail);
    const workgroup = 256,
      per = 4;
    const vec4s = size / 16;
    const groups = Math.ceil(vec4s / (workgroup * per));
    const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;
    if (groups > maxGroups) throw new Error(`the probe's buffer needs ${groups} workgroups, above ${maxGroups}`);
    const pipeline = cachedPipeline(device, copyWgsl(workgroup, per));
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [src, dst].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const t = await timeDispatch(
      device,
      (pass) => {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(groups);
      },
      timing,
    );
    const read = device.createBuffer({
      size: tail.byteLength,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(dst, size - tail.byteLength, read, 0, tail.byteLength);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const got = new Uint32Array(read.getMappedRange().slice(0));
    read.destroy();
    const moved = 2 * size;
    return {
      kind: 'copy',
      bytes: moved,
      buffer_bytes: size,
      bytes_per_s: moved / t.median_s,
      bytes_per_s_min: moved / t.max_s,
      bytes_per_s_max: moved / t.min_s,
      median_s: t.median_s,
      calls: t.calls,
      samples: t.samples,
      verified: got.every((v, i) => v === tail[i]),
    };
  } finally {
    src.destroy();
    dst.destroy();
  }
}
