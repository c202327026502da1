// Page benchmark: load time and update latency of the built site in headless Chromium, medians over several
// cold runs (each in a fresh browser context, so nothing is cached). The tests never assert times; this does
// the measuring. Figures go into BENCHMARKS.md ("Page load and update latency").
// usage: node scripts/bench/bench-page.mjs [--runs N] [--inputs N] [--site build/site]   (build first: bash scripts/serve.sh
// or test.sh). tests/browser/bench-smoke.test.mjs runs it once with few inputs, so a crash fails a test.
import { launchChromium } from '../dev/chromium.mjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(option('--runs', '5'));
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  console.error('bench-page: --runs must be a whole number in [1, 100]');
  process.exit(2);
}
const inputs = Number(option('--inputs', '200'));
if (!Number.isInteger(inputs) || inputs < 1 || inputs > 10000) {
  console.error('bench-page: --inputs must be a whole number in [1, 10000]');
  process.exit(2);
}
const siteDir = path.resolve(root, option('--site', 'build/site'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** In the page: [median, p95] time (ms) of `count` synchronous re-renders of a widget, each from an input event. */
const latency = ([selector, name, count, values]) => {
  const input = document.querySelector(selector)?.shadowRoot?.querySelector(`[name="${name}"]`);
  if (!input) throw new Error(`${selector} has no control named ${name} (not mounted?)`);
  const original = input.value;
  const out = [];
  for (let i = 0; i < count; i++) {
    input.value = values[i % values.length];
    const t0 = performance.now();
    input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    out.push(performance.now() - t0);
  }
  input.value = original;
  input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  out.sort((a, b) => a - b);
  return [out[out.length >> 1], out[Math.min(out.length - 1, Math.ceil(out.length * 0.95) - 1)]];
};

/** In the page: mounts every tally widget (those off screen wait for the reader otherwise); ms when all are ready. */
const wireAll = async () => {
  const widgets = [...document.querySelectorAll('*')].filter((el) => typeof el.mount === 'function' && el.ready);
  await Promise.all(widgets.map((el) => el.mount()));
  return performance.now();
};

const server = await startServer(siteDir, 0);
const browser = await launchChromium();

const rows = {
  'page: DOMContentLoaded (ms)': [],
  'page: ready, every widget wired to the engine (ms)': [],
  'embed example: ready (ms)': [],
};
// Widgets timed per input: [row name, widget selector, field, the values typed in turn].
const LATENCY = [
  ['memory', 'section#memory tally-memory-budget', 'seq', Array.from({ length: 16 }, (_, i) => String(1024 * (i + 1)))],
  ['compute', 'tally-compute', 'gpus', Array.from({ length: 16 }, (_, i) => String(256 * (i + 1)))],
  ['float', 'tally-float', 'value', ['3.140625', '0.1', '65504', '1e-5', '-2.5', '1234.5678']],
];
const latencyRow = (widget, which) => `${widget} widget: re-render per input (ms, ${which} of ${inputs})`;
for (const [widget] of LATENCY) rows[latencyRow(widget, 'median')] = [];
for (const [widget] of LATENCY) rows[latencyRow(widget, 'p95')] = [];
try {
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 120000 });
    const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0].toJSON());
    rows['page: DOMContentLoaded (ms)'].push(nav.domContentLoadedEventEnd);
    // The page's own ready is its first screen; the row is every widget, each mounted on purpose (mount()).
    rows['page: ready, every widget wired to the engine (ms)'].push(await page.evaluate(wireAll));
    for (const [widget, selector, field, values] of LATENCY) {
      const [mid, p95] = await page.evaluate(latency, [selector, field, inputs, values]);
      rows[latencyRow(widget, 'median')].push(mid);
      rows[latencyRow(widget, 'p95')].push(p95);
    }
    await context.close();

    const embedContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const embed = await embedContext.newPage();
    await embed.goto(new URL('/embed-example.html', server.url).href);
    // The embed example has no app.js, so "ready" is every widget's own ready promise.
    const embedReady = await embed.evaluate(async () => {
      await customElements.whenDefined('tally-memory-budget');
      await Promise.all([...document.querySelectorAll('tally-memory-budget, tally-compute')].map((w) => w.ready));
      return performance.now();
    });
    rows['embed example: ready (ms)'].push(embedReady);
    await embedContext.close();
    process.stderr.write(`run ${run + 1}/${runs} done\n`);
  }
} finally {
  await browser.close();
  await server.close();
}

const load = (await import('node:os')).loadavg().map((x) => x.toFixed(2));
console.log(
  `\nPage benchmark: ${runs} cold runs, headless Chromium, ${siteDir} served from 127.0.0.1; load average ${load.join(' ')}\n`,
);
console.log('| measure | median | min | max |');
console.log('|---|---:|---:|---:|');
for (const [name, xs] of Object.entries(rows)) {
  const digits = /re-render/.test(name) ? 2 : 0;
  console.log(
    `| ${name} | ${median(xs).toFixed(digits)} | ${Math.min(...xs).toFixed(digits)} | ${Math.max(...xs).toFixed(digits)} |`,
  );
}
