// tally's wasm GEMM against XNNPACK (TensorFlow.js's wasm backend, tfjs-backend-wasm from npm) in one headless
// Chromium page, single-threaded, interleaved: every round times XNNPACK, tally's kernel 5 (simd, mul + add)
// and simd-relaxed (f32x4.relaxed_madd, where Chromium validates it), in an order that rotates from round to
// round, then the two wasm peak probes, so load from other processes hits all of them alike. Then the roofline
// widget measures single core against all cores (one Web Worker per core, each on a stripe of C).
//
// Equal terms (printed with the figures): both sides get tally's gemm_bench timing rule (engine/kernels/gemm.cpp
// time_kernel): warm-up of at least 3 calls, then more while a call beats the best so far by over 10 % (at most
// 40 calls or 2 s); calls per sample calibrated to >= min_ms; each sample doubled until it lasts >= max(min_ms,
// 2 ms); median of 3 samples. Inputs are resident (made and read once before timing). Inside a timed sample:
// tally, only the kernel calls (C preallocated in wasm memory); XNNPACK, only the tf.matMul calls (each allocates
// its output) and one read-back (dataSync) of the last output; outputs are disposed after the timer stops.
// XNNPACK packs B once per B tensor (tfjs-backend-wasm caches the fully-connected operator by B's id, in
// src/cc/batch_mat_mul_impl.cc), so its timed calls do no packing of B, while tally's kernel packs B in every call.
//
// Run (needs build/site and npm ci):
//   node engine/bench/gemm_vs_xnnpack.mjs --site build/site --n 256,512,1024 --runs 5 [--workers N] [--no-widget]
// Prints per-round figures, then median [min, max] per contender and ratios, and the load average.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../../scripts/dev/chromium.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const site = path.resolve(option('--site', 'build/site'));
const sizes = option('--n', '256,512,1024').split(',').map(Number);
const runs = Number(option('--runs', '5'));
const workers = Number(option('--workers', String(os.availableParallelism?.() ?? os.cpus().length)));
const withWidget = !argv.includes('--no-widget');
const stamp = () =>
  `${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
console.log(`start: ${stamp()}; ${os.cpus()[0].model}, ${os.cpus().length} CPUs, nice ${os.getPriority()}`);
const tfjs = (pkg, file) => path.join(root, 'node_modules/@tensorflow', pkg, 'dist', file);

const loads = [os.loadavg()[0]];
const server = await startServer(site, 0);
const browser = await launchChromium();
const med = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v) => `${med(v).toFixed(2)} [${Math.min(...v).toFixed(2)}, ${Math.max(...v).toFixed(2)}]`;
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (r.url().endsWith('.wasm')) console.log(`loaded ${new URL(r.url()).pathname}`);
  });
  // The benchmark page and the tfjs files, served beside the site (same origin as tally.js / tally.wasm).
  const files = {
    '/bench/tf-core.min.js': tfjs('tfjs-core', 'tf-core.min.js'),
    '/bench/tf-backend-wasm.min.js': tfjs('tfjs-backend-wasm', 'tf-backend-wasm.min.js'),
    '/bench/tfjs-backend-wasm.wasm': tfjs('tfjs-backend-wasm', 'tfjs-backend-wasm.wasm'),
    '/bench/tfjs-backend-wasm-simd.wasm': tfjs('tfjs-backend-wasm', 'tfjs-backend-wasm-simd.wasm'),
    '/bench/tfjs-backend-wasm-threaded-simd.wasm': tfjs('tfjs-backend-wasm', 'tfjs-backend-wasm-threaded-simd.wasm'),
  };
  await page.route('**/bench/**', (route) => {
    const { pathname } = new URL(route.request().url());
    if (pathname === '/bench/index.html')
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><meta charset="utf-8"><title>bench</title><script src="tf-core.min.js"></script><script src="tf-backend-wasm.min.js"></script><script src="../tally.js"></script>',
      });
    const file = files[pathname];
    if (!file) return route.fulfill({ status: 404, body: '' });
    return route.fulfill({
      contentType: file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript',
      body: readFileSync(file),
    });
  });
  await page.goto(new URL('/bench/index.html', server.url).href);
  const setup = await page.evaluate(async () => {
    tf.wasm.setWasmPaths(new URL('/bench/', location.href).href);
    await tf.setBackend('wasm');
    await tf.ready();
    const engine = await createTallyModule({ locateFile: (f) => new URL(`/${f}`, location.href).href });
    const bytes = new Uint8Array(await (await fetch('/tally-relaxed.wasm')).arrayBuffer());
    const relaxed = WebAssembly.validate(bytes);
    if (relaxed) {
      const memory = Object.values(engine.asm).find((v) => v instanceof WebAssembly.Memory);
      engine.tallyRelaxed = (await WebAssembly.instantiate(bytes, { env: { memory } })).instance.exports;
    }
    window.tally = (method, args) => {
      const e = JSON.parse(engine.tally_call(method, JSON.stringify(args)));
      if (!e.ok) throw new Error(e.error.message);
      return e.result;
    };
    // XNNPACK: n x n x n matMul on resident inputs, timed by tally's gemm_bench rule (time_kernel in
    // engine/kernels/gemm.cpp, mirrored here): inside a timed sample only the matMuls (the wasm backend runs each
    // eagerly) and one read-back of the last result; results are disposed after the timer stops.
    window.xnnpack = (n, reps, minMs, warmup) => {
      const a = tf.randomUniform([n, n], -1, 1);
      const b = tf.randomUniform([n, n], -1, 1);
      a.dataSync();
      b.dataSync();
      const timedBatch = (calls) => {
        const outs = [];
        const t0 = performance.now();
        for (let c = 0; c < calls; c += 1) outs.push(tf.matMul(a, b));
        outs[outs.length - 1].dataSync();
        const ms = performance.now() - t0;
        for (const c of outs) c.dispose();
        return ms;
      };
      // Warm-up: at least `warmup` calls, then more while a call beats the best so far by over 10 %, at most 40
      // calls or 2 s (the first call also creates XNNPACK's operator and packs B, cached for later calls).
      let best = Infinity;
      let warmCalls = 0;
      const warmStart = performance.now();
      for (let w = 0; w < 40; w += 1) {
        const ms = timedBatch(1);
        const faster = ms < 0.9 * best;
        best = Math.min(best, ms);
        warmCalls = w + 1;
        if ((w + 1 >= warmup && !faster) || performance.now() - warmStart > 2000) break;
      }
      // Calibrate: how many calls make one sample last at least minMs.
      let calls = 1;
      for (;;) {
        const ms = timedBatch(calls);
        if (ms >= minMs) break;
        calls = Math.ceil(calls * Math.min(16, Math.max(1.5, (minMs / Math.max(ms, 0.01)) * 1.2)));
      }
      // Each sample lasts at least max(minMs, 2 ms), doubling its calls until it does (tally's seconds_per_call).
      const rates = [];
      for (let r = 0; r < reps; r += 1) {
        for (let c = calls; ; c *= 2) {
          const ms = timedBatch(c);
          if (ms > 0 && ms >= Math.max(minMs, 2)) {
            rates.push(((2 * n ** 3 * c) / (ms * 1e-3)) * 1e-9);
            break;
          }
        }
      }
      a.dispose();
      b.dispose();
      rates.sort((x, y) => x - y);
      return { gflops: rates[rates.length >> 1], warmCalls, calls };
    };
    return {
      relaxed,
      backend: tf.getBackend(),
      tfjs: tf.version_core,
      simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
      threads: tf.wasm?.getThreadsCount?.() ?? null,
      isolated: crossOriginIsolated,
    };
  });
  console.log(
    `Chromium ${browser.version()}, tfjs-core ${setup.tfjs} backend ${setup.backend} (SIMD ${setup.simd}, threads ${setup.threads}, cross-origin isolated ${setup.isolated}), relaxed SIMD ${setup.relaxed ? 'validated' : 'not validated'}`,
  );
  const kernels = setup.relaxed ? 'simd,simd-relaxed' : 'simd';
  console.log(
    'timing, both sides: warm-up >= 3 calls then while > 10 % faster (<= 40 calls or 2 s), samples >= 50 ms, median of 3; order rotates each round',
  );
  const results = {}; // key -> [values]
  const push = (key, value) => (results[key] ??= []).push(value);
  for (let run = 0; run < runs; run += 1) {
    const line = [];
    for (const n of sizes) {
      const round = await page.evaluate(
        ({ n, kernels, xnnFirst }) => {
          const tally = () =>
            window.tally('gemm_bench', { n, kernel: kernels, reps: 3, warmup: 3, min_sample_ms: 50 }).rows;
          const xnn = () => window.xnnpack(n, 3, 50, 3);
          let x, rows;
          if (xnnFirst) ((x = xnn()), (rows = tally()));
          else ((rows = tally()), (x = xnn()));
          return {
            x: x.gflops,
            warm: x.warmCalls,
            calls: x.calls,
            rows: rows.map((r) => [r.kernel, r.flops_per_s / 1e9, r.correct]),
          };
        },
        { n, kernels, xnnFirst: run % 2 === 0 },
      );
      push(`xnnpack ${n}`, round.x);
      for (const [kernel, gflops, correct] of round.rows) {
        if (!correct) throw new Error(`${kernel} n=${n} failed its reference check`);
        push(`${kernel} ${n}`, gflops);
        push(`${kernel}/xnnpack ${n}`, gflops / round.x);
      }
      line.push(
        `n=${n}: xnnpack ${round.x.toFixed(1)} (${round.warm} warm-up calls, ${round.calls} calls per sample), ${round.rows.map(([k, g]) => `${k} ${g.toFixed(1)}`).join(', ')}`,
      );
    }
    const peaks = await page.evaluate(
      (relaxed) => ({
        simd: window.tally('probe_peak', { samples: 3, min_sample_ms: 50 }).flops_per_s / 1e9,
        relaxed: relaxed
          ? window.tally('probe_peak', { samples: 3, min_sample_ms: 50, variant: 'relaxed' }).flops_per_s / 1e9
          : null,
      }),
      setup.relaxed,
    );
    push('peak simd', peaks.simd);
    if (peaks.relaxed) push('peak relaxed', peaks.relaxed);
    for (const n of sizes) {
      const best = results[`${setup.relaxed ? 'simd-relaxed' : 'simd'} ${n}`].at(-1);
      push(`best/ceiling ${n}`, best / (peaks.relaxed ?? peaks.simd));
    }
    loads.push(os.loadavg()[0]);
    console.log(
      `round ${run + 1} (${run % 2 === 0 ? 'XNNPACK first' : 'tally first'}, load ${os.loadavg()[0].toFixed(1)}): ${line.join('; ')}; peak ${peaks.simd.toFixed(1)}${peaks.relaxed ? ` / relaxed ${peaks.relaxed.toFixed(1)}` : ''}`,
    );
  }
  console.log(`\nGFLOP/s and ratios, median [min, max] over ${runs} interleaved rounds:`);
  for (const [key, values] of Object.entries(results)) console.log(`  ${key.padEnd(26)} ${fmt(values)}`);

  console.log(`after the rounds: ${stamp()}`);
  // Single core against all cores, through the page's own widget (its Web Workers); --no-widget skips it.
  if (withWidget) {
    const widgetPage = await browser.newPage();
    await widgetPage.goto(new URL('/#roofline', server.url).href);
    const widget = widgetPage.locator('section#roofline tally-roofline');
    // Off-screen widgets mount only when they come near the viewport (web/widgets/kit/mount.js).
    await widget.evaluate((el) => el.scrollIntoView());
    await widget.evaluate((el) => el.ready);
    const big = String(sizes.at(-1));
    for (let run = 0; run < Math.min(runs, 3); run += 1) {
      const d = await widget.evaluate(
        async (el, { big, workers }) => {
          el.setAttribute('sizes', big);
          el.setAttribute('probe-mib', '64');
          el.setAttribute('reps', '3');
          el.shadowRoot.querySelector('input[name="workers"]').value = String(workers);
          const done = new Promise((resolve) =>
            el.addEventListener('measured', (e) => resolve(e.detail), { once: true }),
          );
          el.shadowRoot.querySelector('button.measure').click();
          const detail = await done;
          const single = detail.rows.find((r) => r.kernel === detail.kernel);
          const all = detail.allCoreRows[0];
          return {
            kernel: detail.kernel,
            single: single.flops_per_s / 1e9,
            all: all && all.flops_per_s / 1e9,
            cores: all?.cores,
          };
        },
        { big, workers },
      );
      push('widget single-core', d.single);
      if (d.all) {
        push('widget all-core', d.all);
        push('widget all/single', d.all / d.single);
      }
      loads.push(os.loadavg()[0]);
      console.log(
        `widget run ${run + 1}: ${d.kernel} n=${big}: 1 core ${d.single.toFixed(1)}, ${d.cores} workers ${d.all?.toFixed(1)} GFLOP/s`,
      );
    }
    for (const key of ['widget single-core', 'widget all-core', 'widget all/single'])
      if (results[key]) console.log(`  ${key.padEnd(26)} ${fmt(results[key])}`);
  }
  console.log(
    `load average (1 min) during the run: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on ${os.cpus().length} CPUs`,
  );
} finally {
  await browser.close();
  await server.close();
}
