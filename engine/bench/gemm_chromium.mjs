// The wasm GEMM ladder measured in headless Chromium through the page's own <tally-roofline> widget
// (Web Worker, no threads, not cross-origin isolated), as a reader would run it.
// Run: node engine/bench/gemm_chromium.mjs --site build/site --n 1024 --runs 5
// Prints the UTC time, load average and nice value at the start and the end (the conditions of the figures).
import os from 'node:os';
import { launchChromium } from '../../scripts/dev/chromium.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';
import path from 'node:path';

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const site = path.resolve(option('--site', 'build/site'));
const n = option('--n', '1024');
const runs = Number(option('--runs', '5'));

const stamp = () =>
  `${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, nice ${os.getPriority()}`;
console.log(`start: ${stamp()}; ${os.cpus()[0].model}, ${os.cpus().length} CPUs`);
const server = await startServer(site, 0);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(new URL('/#roofline', server.url).href);
  const widget = page.locator('section#roofline tally-roofline');
  // Off-screen widgets mount only when they come near the viewport (web/widgets/kit/mount.js).
  await widget.evaluate((el) => el.scrollIntoView());
  await widget.evaluate((el) => el.ready);
  const results = [];
  for (let run = 0; run < runs; run += 1) {
    const rows = await widget.evaluate(async (el, sizes) => {
      el.setAttribute('sizes', sizes);
      el.setAttribute('probe-mib', '128');
      el.setAttribute('reps', '5');
      const done = new Promise((resolve) => el.addEventListener('measured', (e) => resolve(e.detail), { once: true }));
      el.shadowRoot.querySelector('button.measure').click();
      const detail = await done;
      return {
        peak: detail.machine.peak.flops_per_s / 1e9,
        bw: detail.machine.bw.read_bytes_per_s / 1e9,
        rows: detail.rows.map((r) => [r.kernel, r.n, r.flops_per_s / 1e9]),
      };
    }, n);
    results.push(rows);
    console.log(
      `run ${run + 1}: peak ${rows.peak.toFixed(1)} GFLOP/s, read ${rows.bw.toFixed(1)} GB/s, ${rows.rows
        .filter((r) => r[0] !== 'naive')
        .map((r) => `${r[0]} ${r[1]}: ${r[2].toFixed(1)}`)
        .join(', ')}`,
    );
  }
  const med = (v) => {
    const s = [...v].sort((a, b) => a - b);
    return s[s.length >> 1];
  };
  for (const kernel of ['ikj', 'blocked', 'packed', 'simd', 'simd-relaxed']) {
    const values = results.map((r) => r.rows.find((x) => x[0] === kernel)?.[2]).filter(Number.isFinite);
    if (values.length)
      console.log(
        `${kernel} n=${n}: median ${med(values).toFixed(1)} [${Math.min(...values).toFixed(1)}, ${Math.max(...values).toFixed(1)}] GFLOP/s over ${values.length} runs`,
      );
  }
  console.log(
    `peak probe median ${med(results.map((r) => r.peak)).toFixed(1)} GFLOP/s; read bandwidth median ${med(results.map((r) => r.bw)).toFixed(1)} GB/s`,
  );
  console.log(`end: ${stamp()}`);
} finally {
  await browser.close();
  await server.close();
}
