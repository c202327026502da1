// Hostile input and careless hosts: the page runs under its CSP without violations; hostile URL state never
// stops the page or puts markup on it, and every rejected value keeps its notice until that field changes; a
// failed engine call leaves no stale result; over-long state is refused with a notice; and host pages that
// pre-define tally names, load the script twice or from two origins, reuse ids or set a strict CSP still work.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSite, siteDir, DESKTOP, sitePage } from './harness.mjs';
import { errors, watch, setControl, mountAll } from './page-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';
import { PAGE_CSP } from '../../scripts/build/csp.mjs';

const READY = 120000; // generous: a shared 2-core machine; nothing here measures time

/** Records CSP violations (the event fires in the document, and inside shadow roots it bubbles to it). */
async function recordViolations(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
}

async function openReady(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: READY });
  await mountAll(page);
}

/** Text of the memory and compute widgets (the float widget names NaN and Infinity encodings on purpose). */
function widgetTexts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('tally-memory-budget, tally-compute')].map((w) => w.shadowRoot?.textContent ?? ''),
  );
}

test('the page runs under its Content-Security-Policy (header and meta, no unsafe-eval) with no violations', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await recordViolations(page);
  const response = await page.goto(site.url);
  assert.equal(response.headers()['content-security-policy'], PAGE_CSP);
  assert.doesNotMatch(PAGE_CSP, /'unsafe-eval'/);
  assert.match(PAGE_CSP, /script-src 'self' 'wasm-unsafe-eval'/);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: READY });
  await mountAll(page);
  assert.equal(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content'), PAGE_CSP);
  // Use the widgets: every inline value resolves, the memory widget answers a change, the float widget decodes.
  await page.waitForFunction(
    () => [...document.querySelectorAll('tally-value')].every((v) => v.dataset.state !== 'loading'),
    null,
    { timeout: READY },
  );
  assert.equal(await page.locator('tally-value[data-state="ok"]').count(), await page.locator('tally-value').count());
  const memory = page.locator('section#memory tally-memory-budget');
  await setControl(memory, 'gpus', '64');
  assert.equal(await memory.evaluate((el) => el.budget.setup.gpus), 64);
  assert.ok(await page.locator('tally-float').evaluate((el) => el.current !== null));
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors(page), []);
  // The policy is in force (a check that could fail): an injected inline script does not run, and is reported.
  const ran = await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.__inlineRan = true';
    document.head.append(script); // an allowed inline script would have run by now (it runs on insertion)
    return window.__inlineRan === true;
  });
  assert.equal(ran, false);
  await page.waitForFunction(() => window.__violations.some((v) => v.startsWith('script-src')));
});

test('hostile URL state: the page becomes ready, nothing from the URL becomes markup, and each bad value gets a notice', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  let dialogs = 0;
  page.on('dialog', async (d) => {
    dialogs++;
    await d.dismiss();
  });
  // Keys: first <tally-compute> is cmp1, first <tally-float> float1, first <tally-memory-budget> mem1. Values are
  // given URL-encoded, so invalid UTF-8 (%ED%A0%80, a lone surrogate's bytes) and NUL can be sent as such.
  const enc = encodeURIComponent;
  const hostile = [
    ['cmp1.mfu', 'abc'],
    ['cmp1.gpus', '0'],
    ['cmp1.tokens', '1e400'],
    ['cmp1.params', 'NaN'],
    ['cmp1.price', 'Infinity'],
    ['cmp1.seq', '0x10'],
    ['cmp1.__proto__', '1'],
    ['cmp1.constructor', 'x'],
    ['float1.format', enc('<img src=x onerror=alert(1)>')],
    ['float1.hex', 'zz'],
    ['float1.seed', '-1'],
    ['mem1.config', enc('{“model_type”: “llama”, “hidden_size”: 4096}')], // smart quotes: the engine cannot parse it
    ['mem1.gpus', '%00'],
    ['mem1.seq', '%ED%A0%80'],
    ['mem1.hardware', enc('"><script>alert(2)</script>')],
    ['mem1.evil', '1'],
  ];
  await openReady(page, `${site.url}?mem1.model=custom&${hostile.map(([k, v]) => `${k}=${v}`).join('&')}`);
  const notices = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('tally-compute, tally-float, tally-memory-budget')]
        .filter((w) => w.key)
        .map((w) => [w.key, w.shadowRoot.querySelector('.url-notice')?.textContent ?? '']),
    ),
  );
  for (const [param] of hostile) {
    const key = param.split('.')[0];
    assert.ok(notices[key].includes(param), `${param} named in "${notices[key]}"`);
  }
  for (const text of await widgetTexts(page)) assert.doesNotMatch(text, /\bNaN\b|Infinity|undefined/);
  assert.equal(
    await page.evaluate(() =>
      [...document.querySelectorAll('tally-memory-budget, tally-compute, tally-float')].reduce(
        (n, w) => n + w.shadowRoot.querySelectorAll('img, script').length,
        0,
      ),
    ),
    0,
    'no markup from the URL',
  );
  const memory = page.locator('tally-memory-budget').first();
  assert.ok(await memory.evaluate((el) => el.budget !== null), 'the memory widget works on its starting values');
  assert.equal(dialogs, 0);
  assert.deepEqual(errors(page), []);
});

test('compute and float keep a URL notice through other updates and drop it when that field changes', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await openReady(page, `${site.url}?cmp1.mfu=abc&cmp1.gpus=0&float1.rounding=sideways`);
  const compute = page.locator('tally-compute').first();
  const float = page.locator('tally-float').first();
  const notice = (w) => w.locator('.url-notice').textContent();
  assert.match(await notice(compute), /cmp1\.mfu \(not a number\).*cmp1\.gpus/);
  assert.match(await notice(float), /float1\.rounding/);
  // Another field changes and the widget re-renders: the notices stay.
  await setControl(compute, 'tokens', '2e12');
  await setControl(float, 'value', '1.5');
  assert.match(await notice(compute), /cmp1\.mfu.*cmp1\.gpus/);
  assert.match(await notice(float), /float1\.rounding/);
  // The field the notice is about changes: only that line goes.
  await setControl(compute, 'mfu', '0.4');
  assert.doesNotMatch(await notice(compute), /cmp1\.mfu/);
  assert.match(await notice(compute), /cmp1\.gpus/);
  assert.deepEqual(errors(page), []);
});

test('a failed engine call clears the old result: a config with smart quotes replaces the verdict with the error', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await openReady(page, `${site.url}#memory`);
  const memory = page.locator('section#memory tally-memory-budget');
  const verdict = memory.locator('[data-out="verdict"]');
  assert.match(await verdict.textContent(), /fit/i);
  await setControl(memory, 'model', 'custom');
  await setControl(memory, 'config', '{“model_type”: “llama”, “hidden_size”: 4096}');
  assert.match(await verdict.textContent(), /^No result: /);
  assert.doesNotMatch(await verdict.textContent(), /Fits|Does not fit/);
  assert.equal(await memory.evaluate((el) => el.budget), null);
  assert.equal(await memory.locator('[data-out="table"] tbody tr').count(), 0, 'no stale table');
  assert.notEqual(
    await memory.locator('.field[data-field="config"] .error').textContent(),
    '',
    'the error is shown beside the config',
  );
  assert.deepEqual(errors(page), []);
});

test('URL state too long for a server is refused with a notice and the link stays loadable', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  // A 20,000-character value (the old limit) still loads: refused with a notice, not a 431 or a dead page.
  const longLink = watch(await site.newPage(DESKTOP));
  await openReady(
    longLink,
    `${site.url}?mem1.model=custom&mem1.config=${encodeURIComponent(`{"a":"${'x'.repeat(20000)}"}`)}#memory`,
  );
  assert.match(
    await longLink.locator('tally-memory-budget').first().locator('.url-notice').textContent(),
    /mem1\.config \(longer than 8000 characters\)/,
  );

  // Typing a config longer than a link may hold: the widget computes, the URL keeps the last state that fit.
  await openReady(page, `${site.url}#memory`);
  const first = page.locator('tally-memory-budget').first();
  await setControl(first, 'model', 'custom');
  await setControl(first, 'config', `{"model_type":"llama","hidden_size":4096,"pad":"${'y'.repeat(9000)}"}`);
  assert.match(await first.locator('.url-notice').textContent(), /too long to keep in the page's link/);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 400))); // past the 200 ms debounce of URL writes
  assert.ok((await page.evaluate(() => location.href.length)) <= 8000, 'the URL stays under 8000 characters');
  const response = await (await site.newPage(DESKTOP)).goto(page.url());
  assert.equal(response.status(), 200, 'the link the page holds loads');
  // Back to a short config: the notice goes and the URL holds the config.
  await setControl(first, 'config', '{"model_type":"llama","hidden_size":4096}');
  assert.doesNotMatch(await first.locator('.url-notice').textContent(), /too long/);
  await page.waitForFunction(() => new URLSearchParams(location.search).get('mem1.config')?.includes('hidden_size'));
  assert.deepEqual([...errors(page), ...errors(longLink)], []);
  assert.deepEqual(errors(page), []);
});

test('hostile gpu-report.json text is shown as text, never markup', async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await page.route('**/gpu-report.json', (route) =>
    route.fulfill({
      contentType: 'application/json',
      body: JSON.stringify({
        schema: 'tally.gpu-measurement/1',
        label: '<img src=x id=label-img>',
        points: [
          {
            kernel: '<img src=x id=kernel-img>',
            dtype: '<b id=dtype-b>',
            n: '<img src=x id=n-img>',
            intensity_flop_per_byte: 100,
            flops_per_s: 1e14,
          },
        ],
      }),
    }),
  );
  await openReady(page, `${site.url}#roofline`);
  const roofline = page.locator('section#roofline tally-roofline');
  await roofline.locator('svg rect.gpu').first().waitFor({ timeout: READY });
  await roofline.locator('svg rect.gpu').first().focus();
  const readout = roofline.locator('.readout');
  assert.match(
    await readout.textContent(),
    /<img src=x id=kernel-img>.*<b id=dtype-b>.*n = <img src=x id=n-img>.*<img src=x id=label-img>/,
  );
  assert.equal(await roofline.evaluate((el) => el.shadowRoot.querySelectorAll('img, #dtype-b').length), 0);
  assert.deepEqual(errors(page), []);
});

// --------------------------------------------------------------------------- host pages on another origin

/** Serves host pages (with no CSP header of their own) from a second origin; the widgets come from `site`. */
async function hostServer(t, pages) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-host-'));
  for (const [name, html] of Object.entries(pages)) writeFileSync(path.join(dir, name), html);
  const host = await startServer(dir, 0, { csp: null });
  t.after(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return host;
}

const hostPage = (head, body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>host</title>${head}</head><body>${body}</body></html>`;

/** Waits until every tally widget the page defined has resolved `ready`. */
async function widgetsReady(page) {
  await page.waitForFunction(
    async () => {
      const widgets = [...document.querySelectorAll('tally-memory-budget, tally-compute')].filter((w) => w.ready);
      if (!widgets.length) return false;
      await Promise.all(widgets.map((w) => w.ready));
      return true;
    },
    null,
    { timeout: READY },
  );
}

test('a host page that already defined <tally-compute> gets a warning; the other widgets still work', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const script = new URL('tally-widgets.js', site.url).href;
  const host = await hostServer(t, {
    'taken.html': hostPage(
      `<script>customElements.define('tally-compute', class extends HTMLElement { connectedCallback() { this.textContent = 'host element'; } });</script>
     <script type="module" src="${script}"></script>`,
      `<tally-compute></tally-compute><tally-memory-budget model="llama-3-8b" gpus="8"></tally-memory-budget>`,
    ),
  });
  const page = watch(await site.newPage(DESKTOP));
  const warnings = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
  });
  await page.goto(new URL('taken.html', host.url).href);
  await widgetsReady(page);
  assert.ok(await page.locator('tally-memory-budget').evaluate((el) => el.budget !== null), 'the memory widget works');
  assert.equal(await page.locator('tally-compute').textContent(), 'host element', "the host's element is left alone");
  assert.ok(
    warnings.some((w) => /<tally-compute> is already defined by this page/.test(w)),
    warnings.join('\n'),
  );
  assert.deepEqual(errors(page), []);
});

test('the widget script loaded twice and from a second origin is harmless', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const mirror = await startServer(siteDir, 0); // the same site on another origin: a second copy of every module
  t.after(() => mirror.close());
  const a = new URL('tally-widgets.js', site.url).href;
  const b = new URL('tally-widgets.js', mirror.url).href;
  const host = await hostServer(t, {
    'twice.html': hostPage(
      `<script type="module" src="${a}"></script><script type="module" src="${a}"></script><script type="module" src="${b}"></script>`,
      `<tally-compute model="llama-3-8b" gpus="256"></tally-compute><tally-memory-budget model="llama-3-8b" gpus="8"></tally-memory-budget>`,
    ),
  });
  const page = watch(await site.newPage(DESKTOP));
  const warnings = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
  });
  await page.goto(new URL('twice.html', host.url).href);
  await widgetsReady(page);
  assert.ok(await page.locator('tally-compute').evaluate((el) => el.result !== null));
  assert.ok(await page.locator('tally-memory-budget').evaluate((el) => el.budget !== null));
  assert.deepEqual(
    warnings.filter((w) => /tally/.test(w)),
    [],
    'a second tally copy is not a conflict',
  );
  assert.deepEqual(errors(page), []);
});

test('widgets with the same id warn and keep their URL state under distinct keys', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const script = new URL('tally-widgets.js', site.url).href;
  const host = await hostServer(t, {
    'dupes.html': hostPage(
      `<script type="module" src="${script}"></script>`,
      // url-state: a host page's widgets keep URL state only when its author asks (docs/EMBEDDING.md).
      `<tally-compute id="calc" model="llama-3-8b" url-state></tally-compute><tally-compute id="calc" model="llama-3-8b" url-state></tally-compute>
     <tally-memory-budget></tally-memory-budget><tally-memory-budget id="mem1"></tally-memory-budget>`,
    ),
  });
  const page = watch(await site.newPage(DESKTOP));
  const warnings = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
  });
  await page.goto(new URL('dupes.html', host.url).href);
  await widgetsReady(page);
  const keys = await page.evaluate(() =>
    [...document.querySelectorAll('tally-compute, tally-memory-budget')].map((w) => w.key),
  );
  assert.equal(new Set(keys).size, keys.length, `distinct keys: ${keys.join(', ')}`);
  assert.equal(keys[0], 'calc');
  assert.ok(
    warnings.some((w) => /two widgets have id="calc"/.test(w)),
    warnings.join('\n'),
  );
  await setControl(page.locator('tally-compute').nth(0), 'gpus', '111');
  await setControl(page.locator('tally-compute').nth(1), 'gpus', '222');
  await page.waitForFunction(() => location.search.includes('gpus=222') && location.search.includes('gpus=111'));
  const params = new URLSearchParams(await page.evaluate(() => location.search));
  assert.equal(params.get('calc.gpus'), '111');
  assert.equal(params.get(`${keys[1]}.gpus`), '222');
  assert.deepEqual(errors(page), []);
});

test("a host with the README's strict CSP runs the widgets; without 'wasm-unsafe-eval' the engine says it cannot load", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const origin = new URL(site.url).origin;
  const script = `${origin}/tally-widgets.js`;
  // The policy README.md gives for host pages, with the tally origin filled in.
  const strict = `default-src 'none'; script-src ${origin} 'wasm-unsafe-eval'; connect-src ${origin}; style-src 'unsafe-inline'; img-src data: blob:; worker-src ${origin} blob:`;
  const body = `<tally-compute model="llama-3-8b" gpus="256"></tally-compute><tally-memory-budget model="llama-3-8b" gpus="8"></tally-memory-budget>`;
  const host = await hostServer(t, {
    'strict.html': hostPage(
      `<meta http-equiv="Content-Security-Policy" content="${strict}"><script type="module" src="${script}"></script>`,
      body,
    ),
    'no-wasm.html': hostPage(
      `<meta http-equiv="Content-Security-Policy" content="${strict.replace(" 'wasm-unsafe-eval'", '')}"><script type="module" src="${script}"></script>`,
      body,
    ),
  });
  const page = watch(await site.newPage(DESKTOP));
  await recordViolations(page);
  await page.goto(new URL('strict.html', host.url).href);
  await widgetsReady(page);
  assert.ok(
    await page.locator('tally-compute').evaluate((el) => el.result !== null),
    'compute works under the strict policy',
  );
  assert.ok(
    await page.locator('tally-memory-budget').evaluate((el) => el.budget !== null),
    'memory works under the strict policy',
  );
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors(page), []);

  const blocked = await site.newPage(DESKTOP);
  await blocked.goto(new URL('no-wasm.html', host.url).href);
  await widgetsReady(blocked);
  assert.match(
    await blocked.locator('tally-compute').evaluate((el) => el.shadowRoot.textContent),
    /The engine could not load: this page's Content-Security-Policy .* its script-src needs 'wasm-unsafe-eval'/,
  );
});
