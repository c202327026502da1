// tally's WebGPU GEMM (web/widgets/webgpu-gemm.js, the tiled WGSL kernel the roofline widget runs) against
// TensorFlow.js's WebGPU backend (@tensorflow/tfjs-backend-webgpu's matMul) on the same adapter, in one headless
// Chromium page, interleaved: every round times both at every n, in an order that rotates from round to round, so
// load from other processes hits both alike. A benchmark, not a test: it prints figures for BENCHMARKS.md.
//
// Equal terms: the same inputs (the engine's fill_uniform values, resident on the GPU before timing) and the same
// timing rule for both (webgpu-gemm.js timeSamples: warm-up calls, calls per sample calibrated to >= --min-ms, median
// of --reps samples). A tally sample is one command buffer of `calls` dispatches, submitted, then
// queue.onSubmittedWorkDone(); a tfjs sample is `calls` tf.matMul calls, tfjs's pending commands submitted, then its
// queue's onSubmittedWorkDone(); tfjs's outputs are disposed after the timer stops. Each side has its own GPUDevice
// on the same adapter (tfjs asks for its own). Before timing, tally's C is checked against the engine's CPU GEMM,
// and tfjs's C against tally's.
//
// Run (needs build/site and npm ci):
//   node scripts/bench/bench-webgpu-gemm.mjs [--site build/site] [--n 256,512,1024] [--runs 5] [--reps 3]
//     [--min-ms 50] [--adapter swiftshader|default]
// --adapter swiftshader (the default) is the software adapter of a machine without a GPU; "default" lets
// Chromium pick the machine's GPU (drop --disable-gpu's effect with a real GPU and drivers).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const site = path.resolve(option('--site', 'build/site'));
const sizes = option('--n', '256,512,1024').split(',').map(Number);
const runs = Number(option('--runs', '5'));
const reps = Number(option('--reps', '3'));
const minMs = Number(option('--min-ms', '50'));
const adapter = option('--adapter', 'swiftshader');
const stamp = () =>
  `${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
console.log(`start: ${stamp()}; ${os.cpus()[0].model}, ${os.cpus().length} CPUs, nice ${os.getPriority()}`);
const tfjs = (pkg, file) => path.join(root, 'node_modules/@tensorflow', pkg, 'dist', file);
const version = (pkg) =>
  JSON.parse(readFileSync(path.join(root, 'node_modules/@tensorflow', pkg, 'package.json'), 'utf8')).version;

const med = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v) => `${med(v).toFixed(2)} [${Math.min(...v).toFixed(2)}, ${Math.max(...v).toFixed(2)}]`;

const server = await startServer(site, 0);
const browser = await launchChromium({
  args: ['--enable-unsafe-webgpu', ...(adapter === 'swiftshader' ? ['--use-webgpu-adapter=swiftshader'] : [])],
});
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') console.error(`console ${m.type()}: ${m.text()}`);
  });
  const files = {
    '/bench/tf-core.min.js': tfjs('tfjs-core', 'tf-core.min.js'),
    '/bench/tf-backend-webgpu.min.js': tfjs('tfjs-backend-webgpu', 'tf-backend-webgpu.min.js'),
  };
  await page.route('**/bench/**', (route) => {
    const { pathname } = new URL(route.request().url());
    if (pathname === '/bench/index.html')
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><meta charset="utf-8"><title>bench</title><script src="tf-core.min.js"></script><script src="tf-backend-webgpu.min.js"></script>',
      });
    const file = files[pathname];
    if (!file) return route.fulfill({ status: 404, body: '' });
    return route.fulfill({ contentType: 'text/javascript', body: readFileSync(file) });
  });
  await page.goto(new URL('/bench/index.html', server.url).href);
  const setup = await page.evaluate(async () => {
    if (!(await tf.setBackend('webgpu'))) throw new Error('tfjs could not start its webgpu backend');
    await tf.ready();
    const g = await import('/widgets/webgpu-gemm.js');
    const { getEngine } = await import('/engine.js');
    window.__g = g;
    window.__engine = await getEngine();
    window.__gpu = await g.openGpu();
    const info = tf.backend().adapterInfo;
    return {
      tally: { name: window.__gpu.name, info: window.__gpu.info, f16: window.__gpu.f16 },
      tfjs: { vendor: info?.vendor, architecture: info?.architecture },
      tiling: g.DEFAULT_TILING,
      userAgent: navigator.userAgent,
    };
  });
  console.log(
    `adapter: tally "${setup.tally.name}" (shader-f16 ${setup.tally.f16}), tfjs ${JSON.stringify(setup.tfjs)}; tfjs-core ${version('tfjs-core')}, tfjs-backend-webgpu ${version('tfjs-backend-webgpu')}; ${setup.userAgent.match(/Chrome\/[\d.]+/)?.[0]}; tally tiling ${JSON.stringify(setup.tiling)}`,
  );
  // Prepare both sides for every n and check the results once.
  for (const n of sizes) {
    const check = await page.evaluate(async (n) => {
      const g = window.__g;
      const gemm = g.prepareGemm(window.__gpu, { n });
      const c = await gemm.readC();
      const check = g.checkAgainstEngine(window.__engine, gemm, c);
      const a = tf.tensor2d(gemm.a, [n, n]);
      const b = tf.tensor2d(gemm.b, [n, n]);
      const t = tf.matMul(a, b);
      const tc = await t.data();
      t.dispose();
      let diff = 0;
      for (let i = 0; i < n * n; i++) diff = Math.max(diff, Math.abs(tc[i] - c[i]));
      (window.__prepared ??= {})[n] = { gemm, a, b };
      return { ok: check.ok, worst: check.worst_ratio, maxErr: check.max_abs_err, tfjsDiff: diff };
    }, n);
    console.log(
      `n = ${n}: tally's C ${check.ok ? 'matches' : 'DOES NOT MATCH'} the engine's CPU GEMM (max error ${check.maxErr.toExponential(1)}, ${check.worst.toFixed(3)} of tolerance); tfjs's C differs from tally's by at most ${check.tfjsDiff.toExponential(1)}`,
    );
    if (!check.ok) throw new Error(`tally's GEMM is wrong at n = ${n}`);
  }
  const results = Object.fromEntries(sizes.map((n) => [n, { tally: [], tfjs: [], ratio: [] }]));
  for (let round = 0; round < runs; round++) {
    const order = round % 2 ? ['tfjs', 'tally'] : ['tally', 'tfjs'];
    for (const n of sizes) {
      const r = await page.evaluate(
        async ({ n, order, reps, minMs }) => {
          const g = window.__g;
          const { gemm, a, b } = window.__prepared[n];
          const warmup = n >= 1024 ? 1 : 2;
          const backend = tf.backend();
          const tfjsRun = async (calls) => {
            const outs = [];
            const t0 = performance.now();
            for (let i = 0; i < calls; i++) outs.push(tf.matMul(a, b));
            backend.endComputePassEncoder();
            if (backend.commandEncoder) backend.submitQueue();
            await backend.device.queue.onSubmittedWorkDone();
            const s = (performance.now() - t0) / 1000;
            for (const o of outs) o.dispose();
            return s;
          };
          const out = {};
          for (const who of order)
            out[who] =
              who === 'tally'
                ? await gemm.run({ reps, warmup, minSampleMs: minMs })
                : await g.timeSamples(tfjsRun, { reps, warmup, minSampleMs: minMs });
          return out;
        },
        { n, order, reps, minMs },
      );
      const gf = (t) => (2 * n ** 3) / t.median_s / 1e9;
      results[n].tally.push(gf(r.tally));
      results[n].tfjs.push(gf(r.tfjs));
      results[n].ratio.push(gf(r.tally) / gf(r.tfjs));
      console.log(
        `round ${round + 1} n = ${n} (${order.join(' then ')}): tally ${gf(r.tally).toFixed(2)} GFLOP/s (${r.tally.calls} calls/sample), tfjs ${gf(r.tfjs).toFixed(2)} GFLOP/s (${r.tfjs.calls} calls/sample), ratio ${(gf(r.tally) / gf(r.tfjs)).toFixed(2)}; ${stamp()}`,
      );
    }
  }
  console.log(`\nGFLOP/s and ratio tally / tfjs-webgpu, median [min, max] over ${runs} interleaved rounds:`);
  console.log('| n | tally WGSL GEMM | tfjs-webgpu matMul | ratio |');
  console.log('|---|---|---|---|');
  for (const n of sizes)
    console.log(`| ${n} | ${fmt(results[n].tally)} | ${fmt(results[n].tfjs)} | ${fmt(results[n].ratio)} |`);
  console.log(`end: ${stamp()}`);
} finally {
  await browser.close();
  await server.close();
}
