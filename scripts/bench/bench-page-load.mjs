// Page-load benchmark: cold loads of one or more built sites in one headless Chromium, alternating, and
// the median [min, max] of each. Every load is a fresh browser context (empty cache, 1280 x 900) on the site
// served by scripts/dev/static-server.mjs on 127.0.0.1; the first round is discarded (it warms the disk cache).
// Moments, all on the page's own clock (performance.now(), 0 = navigation start):
//   fp     - first paint (PerformanceObserver 'paint', first-paint);
//   fcp    - first contentful paint;
//   dcl    - DOMContentLoaded (navigation timing, domContentLoadedEventStart);
//   first screen - the widgets near the viewport at load wired to the engine (app.js sets
//          data-first-screen-ready-ms; widgets further down mount when idle or when scrolled near); on a page
//          without that scheduling it equals ready;
//   ready  - every widget the reader can reach wired (app.js sets data-ready-ms);
//   values - every inline engine number in the DOM and ok (no <tally-value> still loading), checked in each
//          animation frame from the start of the load by an init script, once the document is parsed; it is on
//          screen at max(values, fp).
// --floor adds two one-paragraph pages served from the first site's server: one with no stylesheet or script (the
// time this machine's Chromium needs to paint anything at all in a fresh context) and one with the first site's own
// <head> (its stylesheets, fonts, preloads and scripts): the floor under fp and fcp that the head alone sets.
// usage: node scripts/bench/bench-page-load.mjs [--runs 7] [--floor] [--label dir]...   (default: after=build/site)
// e.g.   node scripts/bench/bench-page-load.mjs --runs 7 --floor --before build/site-before --after build/site
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
let runs = 7;
let floor = false;
const sites = [];
for (let i = 0; i < argv.length; i += 1) {
  if (argv[i] === '--runs') runs = Number(argv[(i += 1)]);
  else if (argv[i] === '--floor') floor = true;
  else sites.push({ label: argv[i].replace(/^--/, ''), dir: path.resolve(root, argv[(i += 1)]) });
}
if (!sites.length) sites.push({ label: 'after', dir: path.join(root, 'build/site') });
if (!(runs >= 1)) {
  console.error('bench-page-load: --runs must be a positive number');
  process.exit(2);
}
const stamp = () =>
  `${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

// Records first paint, first contentful paint and the first frame in which every inline value is shown.
const initScript = () => {
  window.__bench = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench[e.name] = e.startTime;
  }).observe({ type: 'paint', buffered: true });
  const tick = () => {
    const parsed = document.readyState !== 'loading';
    if (parsed && [...document.querySelectorAll('tally-value')].every((v) => v.dataset.state === 'ok'))
      window.__bench.values = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};

const browser = await launchChromium();
console.log(
  `start: ${stamp()}; Chromium ${browser.version()}, ${os.cpus()[0].model}, ${os.cpus().length} CPUs, nice ${os.getPriority()}; ${runs} cold loads per site (+1 discarded)`,
);
const firstHtml = readFileSync(path.join(sites[0].dir, 'index.html'), 'utf8');
const floors = [
  { label: 'floor', what: 'one paragraph, no stylesheet or script', html: '<!doctype html><title>floor</title>' },
  {
    label: 'head floor',
    what: `one paragraph under ${sites[0].label}'s <head>`,
    html: firstHtml.slice(0, firstHtml.indexOf('</head>') + 7),
  },
].map((f) => ({ ...f, floor: true, html: `${f.html}<body><p>First paint.</p></body></html>` }));
const all = floor ? [...sites, ...floors] : sites;
for (const site of all) {
  site.server = site.floor ? sites[0].server : await startServer(site.dir, 0);
  site.samples = { fp: [], fcp: [], dcl: [], first: [], ready: [], values: [] };
  site.firstWidgets = 0;
  site.elements = 0;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (let run = 0; run < runs + 1; run++) {
  for (const site of all) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(initScript);
    const page = await context.newPage();
    if (site.floor)
      await page.route('**/__floor.html', (route) => route.fulfill({ contentType: 'text/html', body: site.html }));
    await page.goto(new URL(site.floor ? '__floor.html' : '', site.server.url).href);
    if (!site.floor) {
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 30000 });
      await page.waitForFunction(() => window.__bench.values !== undefined, null, { timeout: 30000 });
    }
    await page.waitForFunction(() => window.__bench['first-contentful-paint'] !== undefined, null, { timeout: 30000 });
    const m = await page.evaluate(() => {
      const root = document.documentElement.dataset;
      return {
        fp: window.__bench['first-paint'],
        fcp: window.__bench['first-contentful-paint'],
        dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventStart,
        ready: Number(root.readyMs),
        first: Number(root.firstScreenReadyMs ?? root.readyMs),
        values: window.__bench.values,
        firstWidgets: root.firstScreenWidgets ?? 'all',
        elements: document.getElementsByTagName('*').length,
      };
    });
    site.firstWidgets = m.firstWidgets;
    site.elements = m.elements;
    if (run > 0) for (const key of Object.keys(site.samples)) site.samples[key].push(m[key]);
    await context.close();
  }
}
const names = {
  fp: 'first paint',
  fcp: 'first contentful paint',
  dcl: 'DOMContentLoaded',
  first: 'first screen ready',
  ready: 'ready (every reachable widget wired)',
  values: 'every inline value in the DOM, ok',
};
for (const site of all) {
  console.log(
    `${site.label} (${site.floor ? site.what : path.relative(root, site.dir)}): ${site.elements} elements` +
      (site.floor ? '' : `, ${site.firstWidgets} widgets near the first screen`),
  );
  for (const [key, values] of Object.entries(site.samples)) {
    if (site.floor && !['fp', 'fcp', 'dcl'].includes(key)) continue;
    const v = values.map(Math.round);
    console.log(
      `  ${names[key].padEnd(38)} median ${Math.round(median(values))} ms [${Math.min(...v)}, ${Math.max(...v)}]  runs ${v.join(', ')}`,
    );
  }
}
for (const site of sites) await site.server.close();
console.log(`end: ${stamp()}`);
await browser.close();
