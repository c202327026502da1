// Host pages with policies of their own and hosts that drive the widgets: a page that requires Trusted Types runs
// every widget (each number equal to the native CLI's) with no violation; a page whose CSP lacks
// 'wasm-unsafe-eval' or tally's connect source is told which directive it lacks; `eager` and mount() start a widget
// below the fold without the reader scrolling; a Share control that cannot be built leaves its figure working.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite, siteDir, DESKTOP } from './harness.mjs';
import { assertComputes, courseSite } from './kit-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(() => site?.close());

const WIDGETS = [
  '<tally-memory-budget model="llama-3-8b" hardware="h100-sxm" gpus="8" zero="3"></tally-memory-budget>',
  '<tally-compute model="llama-3-70b" tokens="15e12" gpus="1024" mfu="0.4"></tally-compute>',
  '<tally-step model="llama-3-70b" gpus="64" tp="8" pp="2"></tally-step>',
  '<tally-inference model="llama-3-8b"></tally-inference>',
  '<tally-collectives></tally-collectives>',
  '<tally-float format="e4m3" value="500"></tally-float>',
  '<tally-roofline hardware="h100-sxm"></tally-roofline>',
];

/** A host page on its own origin that loads tally's widgets from tally's site. */
function hostPage(body, head = '') {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course</title>${head}
<script type="module" src="${new URL('tally-widgets.js', site.url).href}"></script></head><body><h1>Week 3</h1>
${body}</body></html>`;
}

/** A page of the shared browser that records CSP violations (window.__violations) and console warnings. */
async function newPage() {
  const page = await site.newPage(DESKTOP);
  await page.route('**/favicon.ico', (route) => route.fulfill({ status: 204 })); // the browser's own request
  page.warnings = [];
  page.on('console', (m) => m.type() === 'warning' && page.warnings.push(m.text()));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`),
    );
  });
  return page;
}

test("a page that requires Trusted Types (and allows only the policy 'tally') runs every widget with no violation", async (t) => {
  const host = await courseSite(
    { 'index.html': hostPage(WIDGETS.join('\n')) },
    "require-trusted-types-for 'script'; trusted-types tally",
  );
  t.after(() => host.close());
  const page = await newPage();
  const response = await page.goto(host.url);
  assert.match(response.headers()['content-security-policy'], /require-trusted-types-for 'script'/);
  for (const html of WIDGETS) {
    const tag = /^<([a-z-]+)/.exec(html)[1];
    await assertComputes(page.locator(tag), `trusted types ${tag}`);
  }
  // A reader's edit rewrites the markup (the memory widget's table and chart) through the policy too.
  const memory = page.locator('tally-memory-budget');
  await memory.evaluate((el) => el.setState({ gpus: 16 }));
  await assertComputes(memory, 'trusted types tally-memory-budget after setState');
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(page.errors, []);
});

test("a page whose trusted-types list leaves out 'tally' gets a widget that says what to allow, and ready resolves", async (t) => {
  const host = await courseSite(
    { 'index.html': hostPage(WIDGETS[1]) },
    "require-trusted-types-for 'script'; trusted-types course-policy",
  );
  t.after(() => host.close());
  const page = await newPage();
  await page.goto(host.url);
  const text = await page.locator('tally-compute').evaluate(async (el) => {
    await el.mount();
    return el.shadowRoot.textContent;
  });
  assert.match(text, /This figure could not start: .*allow the policy 'tally' in its trusted-types directive/, text);
  assert.ok(
    page.warnings.some((w) => /could not create the Trusted Types policy 'tally'/.test(w)),
    page.warnings.join('\n'),
  );
});

/** The text of `tag`'s box once it is ready (mounted on purpose: the message is what is checked). */
async function boxText(page, tag) {
  return page.locator(tag).evaluate(async (el) => {
    await el.mount();
    return el.shadowRoot.textContent.replace(/\s+/g, ' ');
  });
}

test("tally served under script-src 'self': the widget says the page's script-src needs 'wasm-unsafe-eval' and where the recipe is", async (t) => {
  const strict = await startServer(siteDir, 0, { csp: "script-src 'self'" });
  t.after(() => strict.close());
  const page = await site.newPage(DESKTOP);
  await page.goto(new URL('embed.html?widget=compute', strict.url).href);
  const text = await boxText(page, 'tally-compute');
  assert.match(text, /The engine could not load: this page's Content-Security-Policy does not let the browser compile/);
  assert.match(text, /its script-src needs 'wasm-unsafe-eval'/, text);
  assert.match(text, /docs\/EMBEDDING\.md, section “A host page's Content-Security-Policy”/, text);
  assert.doesNotMatch(text, /CompileError|WebAssembly\.instantiate/, 'not the raw browser error');
  assert.equal(await page.locator('tally-compute').getAttribute('data-tally-mount'), 'failed');
});

test("a host page whose connect-src leaves out tally's origin is told to add it to connect-src", async (t) => {
  const origin = new URL(site.url).origin;
  const host = await courseSite(
    { 'index.html': hostPage(WIDGETS[1]) },
    `script-src ${origin} 'wasm-unsafe-eval'; connect-src 'self'`,
  );
  t.after(() => host.close());
  const page = await newPage();
  await page.goto(host.url);
  const text = await boxText(page, 'tally-compute');
  assert.match(text, new RegExp(`blocks fetching tally\\.wasm from ${origin}: add ${origin} to its connect-src`), text);
});

test('eager and mount() start widgets below the fold without scrolling; the others wait and say so', async (t) => {
  const host = await courseSite({
    'index.html': hostPage(`<div style="height: 6000px">Reading.</div>
<tally-compute eager model="llama-3-8b" tokens="15e12" gpus="256"></tally-compute>
<tally-float format="e4m3" value="500"></tally-float>
<tally-step model="llama-3-70b" gpus="64" tp="8" pp="2"></tally-step>`),
  });
  t.after(() => host.close());
  const page = await newPage();
  await page.goto(host.url);
  const scrolled = () => page.evaluate(() => window.scrollY);
  // eager: ready with no call and no scroll.
  await page.locator('tally-compute').evaluate((el) => el.ready);
  assert.equal(await page.locator('tally-compute').getAttribute('data-tally-mount'), 'ready');
  // mount(): resolves ready for a widget that was waiting.
  assert.equal(await page.locator('tally-float').getAttribute('data-tally-mount'), 'waiting');
  await page.locator('tally-float').evaluate((el) => el.mount());
  assert.equal(await page.locator('tally-float').getAttribute('data-tally-mount'), 'ready');
  assert.equal(await page.locator('tally-step').getAttribute('data-tally-mount'), 'waiting', 'the others still wait');
  // mount() before the element is in the document: it starts as soon as it is connected.
  const state = await page.evaluate(async () => {
    const el = document.createElement('tally-collectives');
    const ready = el.mount();
    document.body.append(el);
    await ready;
    return el.getState();
  });
  assert.ok(state && Object.keys(state).length > 0, `a created element mounts on append (${JSON.stringify(state)})`);
  assert.equal(await scrolled(), 0, 'nothing scrolled');
  for (const tag of ['tally-compute', 'tally-float']) await assertComputes(page.locator(tag), tag);
  assert.deepEqual(page.errors, []);
});

test('a Share control that cannot be built leaves the figure computing, with a console warning', async (t) => {
  const host = await courseSite({ 'index.html': hostPage(WIDGETS[1]) });
  t.after(() => host.close());
  const page = await newPage();
  // Share / embed is the only part of a widget made of <details>: building it throws.
  await page.addInitScript(() => {
    const create = Document.prototype.createElement;
    Document.prototype.createElement = function (name, ...rest) {
      if (String(name).toLowerCase() === 'details') throw new Error('no details here');
      return create.call(this, name, ...rest);
    };
  });
  await page.goto(host.url);
  await assertComputes(page.locator('tally-compute'), 'compute without Share');
  assert.equal(await page.locator('tally-compute').evaluate((el) => !!el.shadowRoot.querySelector('.share')), false);
  assert.ok(
    page.warnings.some((w) =>
      /Share \/ embed control could not be built \(no details here\); the figure works/.test(w),
    ),
    page.warnings.join('\n'),
  );
  assert.deepEqual(page.errors, []);
});
