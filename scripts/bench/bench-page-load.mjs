// Page-load benchmark: cold loads of one or more built sites in one headless Chromium, alternating, and
// the median of each. Moments timed by the page itself (performance.now()):
//   first screen - the widgets near the viewport at load wired to the engine (app.js sets data-first-screen-ready-ms;
//          widgets further down mount when idle or when scrolled near, web/widgets/base.js); on a page
//          without that scheduling it equals ready;
//   ready  - every widget wired to the engine (app.js sets data-ready-ms);
//   values - every inline engine number shown (no <tally-value> still loading), polled each frame;
//   fcp    - first contentful paint.
// usage: node scripts/bench/bench-page-load.mjs [--runs 7] [--label dir]...   (default: after=build/site)
// e.g.   node scripts/bench/bench-page-load.mjs --runs 7 --before build/site-before --after build/site
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
let runs = 7;
const sites = [];
for (let i = 0; i < argv.length; i += 2) {
  if (argv[i] === '--runs') runs = Number(argv[i + 1]);
  else sites.push({ label: argv[i].replace(/^--/, ''), dir: path.resolve(root, argv[i + 1]) });
}
if (!sites.length) sites.push({ label: 'after', dir: path.join(root, 'build/site') });
if (!(runs >= 1)) {
  console.error('bench-page: --runs must be a positive number');
  process.exit(2);
}

const browser = await launchChromium();
for (const site of sites) {
  site.server = await startServer(site.dir, 0);
  site.ready = [];
  site.first = [];
  site.firstWidgets = 0;
  site.values = [];
  site.fcp = [];
  site.elements = 0;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (let run = 0; run < runs + 1; run++) {
  for (const site of sites) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(site.server.url);
    // Values first: on a prerendered page they are in the HTML, so this resolves as soon as it is parsed.
    await page.waitForFunction(
      () => [...document.querySelectorAll('tally-value')].every((v) => v.dataset.state === 'ok'),
      null,
      { timeout: 30000, polling: 'raf' },
    );
    const valuesMs = await page.evaluate(() => performance.now());
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, {
      timeout: 30000,
      polling: 'raf',
    });
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
    const readyMs = Number(await page.evaluate(() => document.documentElement.dataset.readyMs));
    const firstMs = Number(
      await page.evaluate(
        () => document.documentElement.dataset.firstScreenReadyMs ?? document.documentElement.dataset.readyMs,
      ),
    );
    site.firstWidgets = await page.evaluate(() => document.documentElement.dataset.firstScreenWidgets ?? 'all');
    site.elements = await page.evaluate(() => document.getElementsByTagName('*').length);
    if (run > 0) {
      site.ready.push(readyMs);
      site.first.push(firstMs);
      site.values.push(valuesMs);
      site.fcp.push(fcp);
    } // run 0 warms the disk cache
    await context.close();
  }
}
for (const site of sites) {
  console.log(
    `${site.label} (${path.relative(root, site.dir)}): ${runs} cold loads, ${site.elements} elements; ` +
      `first screen ready (${site.firstWidgets} widgets) median ${Math.round(median(site.first))} ms [${site.first.map(Math.round).join(', ')}]; ` +
      `ready (all widgets wired) median ${Math.round(median(site.ready))} ms [${site.ready.map(Math.round).join(', ')}]; ` +
      `all values shown median ${Math.round(median(site.values))} ms [${site.values.map(Math.round).join(', ')}]; ` +
      `first contentful paint median ${Math.round(median(site.fcp))} ms`,
  );
  await site.server.close();
}
await browser.close();
