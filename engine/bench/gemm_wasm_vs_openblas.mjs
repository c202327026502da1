// The wasm GEMM ladder (in node) against native OpenBLAS sgemm, single-threaded, run in alternation
// so a noisy neighbour slows both alike; the ratio is taken within each run.
//
// Build: the wasm engine (build/wasm) and the native comparison program (tally_gemm_vs_openblas).
// Run:   node engine/bench/gemm_wasm_vs_openblas.mjs --wasm build/wasm --native build/native \
//          --n 1024,2048 --runs 5 [--kernels simd,packed]
// Prints, per size: OpenBLAS GFLOP/s, each wasm kernel's GFLOP/s and the ratio wasm / OpenBLAS as
// median [min, max] over the runs; first the conditions: the core OpenBLAS chose, the OPENBLAS_ variables
// passed to it (OPENBLAS_CORETYPE unset = the library as installed picks its kernel), the UTC time and the load
// average, again at the end. Each OpenBLAS run is one process: tally's warm-up rule, then the median of 3
// calls (tally_gemm_vs_openblas); each wasm run is gemm_bench's warm-up rule, then the median of 3 samples of
// >= 20 ms.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import os, { tmpdir } from 'node:os';
import path from 'node:path';

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const wasmDir = path.resolve(option('--wasm', 'build/wasm'));
const nativeDir = path.resolve(option('--native', 'build/native'));
const sizes = option('--n', '1024,2048').split(',').map(Number);
const runs = Number(option('--runs', '5'));
const kernels = option('--kernels', 'simd,packed').split(',');

// tally.js is CommonJS glue; load it from a .cjs copy so a "type": "module" package.json cannot
// change how node reads it.
const scratch = mkdtempSync(path.join(tmpdir(), 'tally-wasm-'));
writeFileSync(path.join(scratch, 'tally.cjs'), readFileSync(path.join(wasmDir, 'tally.js')));
const createTallyModule = createRequire(import.meta.url)(path.join(scratch, 'tally.cjs'));
const module = await createTallyModule({ wasmBinary: readFileSync(path.join(wasmDir, 'tally.wasm')) });
const call = (method, args) => {
  const envelope = JSON.parse(module.tally_call(method, JSON.stringify(args)));
  if (!envelope.ok) throw new Error(`${method}: ${envelope.error.message}`);
  return envelope.result;
};

let openblasCore = '?';
function openblasGflops(n) {
  const text = execFileSync(
    path.join(nativeDir, 'tally_gemm_vs_openblas'),
    ['--n', String(n), '--runs', '1', '--reps', '3', '--kernels', 'simd'],
    { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: '1' } },
  );
  const match = /openblas\s+([0-9.]+) GFLOP\/s/.exec(text);
  if (!match) throw new Error(`unexpected output:\n${text}`);
  openblasCore = /core (\S+),/.exec(text)?.[1] ?? '?';
  return Number(match[1]);
}

const summary = (values) => {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return { median: v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2, min: v[0], max: v.at(-1) };
};
const fmt = (s, digits = 1) => `${s.median.toFixed(digits)} [${s.min.toFixed(digits)}, ${s.max.toFixed(digits)}]`;

const stamp = () =>
  `${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
const blasEnv = Object.entries(process.env).filter(([k]) => k.startsWith('OPENBLAS_'));
console.log(
  `start: ${stamp()}; ${os.cpus()[0].model}, nice ${os.getPriority()}; wasm ISA ${call('gemm_kernels', {}).isa} under node ${process.version}; native OpenBLAS 1 thread (environment: ${blasEnv.length ? blasEnv.map(([k, v]) => `${k}=${v}`).join(' ') : 'no OPENBLAS_ variable'}, OPENBLAS_NUM_THREADS=1 added); ${runs} runs, alternating`,
);
for (const n of sizes) {
  const blas = [];
  const wasm = Object.fromEntries(kernels.map((k) => [k, []]));
  for (let run = 0; run < runs; run += 1) {
    blas.push(openblasGflops(n));
    for (const kernel of kernels) {
      const row = call('gemm_bench', { n, kernel, reps: 3, warmup: 3, min_sample_ms: 20 }).rows[0];
      if (!row.correct) throw new Error(`${kernel} n=${n} is out of tolerance: ${row.max_abs_err}`);
      wasm[kernel].push(row.flops_per_s / 1e9); // GFLOP/s, as openblasGflops
    }
  }
  console.log(`n = ${n}: OpenBLAS native (core ${openblasCore}) ${fmt(summary(blas))} GFLOP/s`);
  for (const kernel of kernels) {
    const ratios = wasm[kernel].map((g, i) => g / blas[i]);
    console.log(
      `  wasm ${kernel.padEnd(7)} ${fmt(summary(wasm[kernel]))} GFLOP/s   ratio to OpenBLAS ${fmt(summary(ratios), 3)}`,
    );
  }
}
console.log(`end: ${stamp()}`);
