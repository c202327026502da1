// Lighthouse benchmark (a benchmark, never a test): mobile performance and accessibility of index.html and
// embed.html, served as scripts/serve.sh serves them (scripts/dev/static-server.mjs: compression, caching, CSP), with
// Lighthouse's default mobile settings (Moto G Power viewport, simulated slow 4G, 4x CPU slowdown). Each run is a
// fresh headless Chromium (no cache); medians over the runs go into BENCHMARKS.md ("Lighthouse, mobile").
// usage: node scripts/bench/bench-lighthouse.mjs [--runs 3] [--site build/site | --url http://127.0.0.1:8000/]
//        [--pages "index.html,embed.html?widget=memory-budget"] [--lcp (print each run's LCP element and phases)]   (build first: bash scripts/serve.sh builds build/site)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';
import { startServer } from '../dev/static-server.mjs';
import { CHROMIUM_ARGS } from '../dev/chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(option('--runs', '3'));
if (!Number.isInteger(runs) || runs < 1 || runs > 50) {
  console.error(`bench-lighthouse: --runs must be a whole number in [1, 50], got ${option('--runs')}`);
  process.exit(2);
}
const pages = option('--pages', 'index.html,embed.html?widget=memory-budget,embed.html?widget=float')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
const given = option('--url', null);
let server = null;
if (!given) {
  try {
    server = await startServer(path.resolve(root, option('--site', 'build/site')), 0);
  } catch (error) {
    console.error(`bench-lighthouse: ${error.message}`);
    process.exit(2);
  }
}
const base = given ?? server.url;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The LCP element and its subparts (ms), from Lighthouse's LCP breakdown insight. */
function lcpElement(lhr) {
  const items = lhr.audits['lcp-breakdown-insight']?.details?.items ?? [];
  const node = items.find((item) => item.type === 'node');
  const parts = (items.find((item) => item.type === 'table')?.items ?? []).map(
    (p) => `${p.subpart} ${Math.round(p.duration)}`,
  );
  return `${node?.snippet ?? 'unknown'} "${(node?.nodeLabel ?? '').slice(0, 40)}": ${parts.join(', ')}`;
}

/** One cold Lighthouse run of `url` in a fresh Chromium: scores (0-100) and the main metrics (ms, CLS unitless). */
async function audit(url) {
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    chromeFlags: ['--headless=new', ...CHROMIUM_ARGS],
  });
  try {
    const { lhr } = await lighthouse(url, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: ['performance', 'accessibility'],
    });
    if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    const metric = (id) => lhr.audits[id]?.numericValue ?? NaN;
    const failing = Object.values(lhr.categories.accessibility.auditRefs)
      .map((ref) => lhr.audits[ref.id])
      .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode === 'binary')
      .map((a) => a.id);
    return {
      performance: Math.round(lhr.categories.performance.score * 100),
      accessibility: Math.round(lhr.categories.accessibility.score * 100),
      fcp: metric('first-contentful-paint'),
      lcp: metric('largest-contentful-paint'),
      tbt: metric('total-blocking-time'),
      cls: metric('cumulative-layout-shift'),
      si: metric('speed-index'),
      failing,
      lcpElement: lcpElement(lhr),
    };
  } finally {
    await chrome.kill();
  }
}

console.log(
  `Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version}, mobile, ${runs} cold runs each, ${base}`,
);
console.log('page | performance | accessibility | FCP ms | LCP ms | TBT ms | CLS | Speed Index ms');
try {
  for (const page of pages) {
    const results = [];
    for (let i = 0; i < runs; i++) results.push(await audit(new URL(page, base).href));
    const m = (key) => median(results.map((r) => r[key]));
    const failing = [...new Set(results.flatMap((r) => r.failing))];
    // --lcp: what the largest paint was in each run, to tell what to make paint sooner.
    if (argv.includes('--lcp')) for (const r of results) console.log(`  ${page} LCP element: ${r.lcpElement}`);
    console.log(
      `${page} | ${m('performance')} | ${m('accessibility')} | ${m('fcp').toFixed(0)} | ${m('lcp').toFixed(0)} | ` +
        `${m('tbt').toFixed(0)} | ${m('cls').toFixed(3)} | ${m('si').toFixed(0)}` +
        `   (performance per run: ${results.map((r) => r.performance).join(', ')}${failing.length ? `; failing a11y audits: ${failing.join(', ')}` : ''})`,
    );
  }
} finally {
  await server?.close();
}
