// A phone's first load (issue 26): embed.html fetches only the widget it shows and nothing on it shifts as the
// widget mounts; index.html does not preload the engine, which is fetched when a widget first needs it.
// Lighthouse's scores are a benchmark (scripts/bench/bench-lighthouse.mjs, BENCHMARKS.md), never asserted here.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startSite, siteDir, root, PHONE, sitePage } from './harness.mjs';
import { errors, watch, mountAll } from './page-helpers.mjs';

/** name -> module file, from web/embed.js's WIDGET_MODULES. */
const WIDGET_FILES = new Map(
  [
    ...readFileSync(path.join(root, 'web/embed.js'), 'utf8').matchAll(
      /'?([a-z-]+)'?: \(\) => import\('\.\/widgets\/([a-z-]+\.js)'\)/g,
    ),
  ].map((m) => [m[1], m[2]]),
);

test('embed.html fetches only its own widget module, and nothing in the frame shifts as the widget mounts', async (t) => {
  assert.ok(WIDGET_FILES.size >= 7, `embed.js lists ${WIDGET_FILES.size} widgets`);
  const site = await startSite();
  t.after(() => site.close());
  for (const [name, file] of WIDGET_FILES) {
    const page = watch(await site.newPage(PHONE));
    // Every layout shift from the first paint on, recorded before any of the page's scripts run.
    await page.addInitScript(() => {
      window.tallyShifts = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.tallyShifts.push(entry.value);
      }).observe({ type: 'layout-shift', buffered: true });
    });
    const fetched = [];
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(new URL(`embed.html?widget=${name}`, site.url).href);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 120000 });
    // Two frames after ready, so the shifts of the last layout have been reported.
    const shifts = await page.evaluate(
      () =>
        new Promise((resolve) =>
          requestAnimationFrame(() => requestAnimationFrame(() => resolve(window.tallyShifts.slice()))),
        ),
    );
    assert.deepEqual(shifts, [], `${name}: layout shifts ${shifts.join(', ')}`);
    const widgetModules = fetched.filter((p) => [...WIDGET_FILES.values()].some((f) => p === `/widgets/${f}`));
    assert.deepEqual(widgetModules, [`/widgets/${file}`], `${name} fetched ${widgetModules.join(', ')}`);
    assert.ok(!fetched.includes('/tally-widgets.js'), `${name}: the all-widgets entry is not fetched`);
    assert.equal(fetched.filter((p) => p === '/tally.wasm').length, 1, `${name}: one engine download`);
    assert.deepEqual(errors(page), []);
    await page.close();
  }
});

test('index.html preloads neither tally.js nor tally.wasm, and the engine download starts after the first paint', async (t) => {
  const html = readFileSync(path.join(siteDir, 'index.html'), 'utf8');
  const preloads = [...html.matchAll(/<link rel="(?:module)?preload"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(preloads.length > 0, 'the page preloads its modules');
  assert.ok(!preloads.some((href) => /^tally(-relaxed)?\.(js|wasm)$/.test(href)), `preloads: ${preloads.join(', ')}`);
  // In the browser: the engine's download starts after the first paint, so it never competes with it.
  const { site, page } = await sitePage(t, PHONE);
  watch(page);
  await page.goto(site.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 120000 });
  await mountAll(page);
  const { paint, wasm } = await page.evaluate(() => ({
    paint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
    wasm:
      performance.getEntriesByType('resource').find((e) => new URL(e.name).pathname === '/tally.wasm')?.startTime ??
      null,
  }));
  assert.ok(paint !== null && wasm !== null, `first paint at ${paint} ms, tally.wasm requested at ${wasm} ms`);
  assert.ok(
    wasm > paint,
    `tally.wasm requested at ${wasm.toFixed(0)} ms, after the first paint at ${paint.toFixed(0)} ms`,
  );
  assert.deepEqual(errors(page), []);
});

test('index.html wires the widgets near the first screen and mounts the others only as the reader comes near them', async (t) => {
  const { site, page } = await sitePage(t, PHONE);
  watch(page);
  await page.goto(site.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 120000 });
  // A widget has mounted once it holds the engine (web/widgets/kit/element.js connectedCallback).
  const mounted = () =>
    page.evaluate(() =>
      [...document.querySelectorAll('*')]
        .filter((el) => el.localName.startsWith('tally-') && el.ready)
        .map((w) => !!w.engine),
    );
  const atLoad = await mounted();
  assert.ok(atLoad.length >= 7, `${atLoad.length} widgets on the page`);
  assert.ok(atLoad.at(-1) === false, `the last widget, chapters below the first screen, waits: ${atLoad.join(', ')}`);
  // The reader scrolls to the last widget: it mounts and shows the engine's numbers, with no other step.
  await page.evaluate(() => {
    const all = [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('tally-') && el.ready);
    all.at(-1).scrollIntoView();
  });
  await page.waitForFunction(() => {
    const all = [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('tally-') && el.ready);
    return !!all.at(-1).engine && !all.at(-1).shadowRoot.textContent.includes('Loading the engine');
  });
  assert.equal((await mounted()).at(-1), true);
  assert.deepEqual(errors(page), []);
});
