// Accessibility: axe-core (a devDependency, injected from node_modules, never a CDN) finds no violation of the
// WCAG 2.0/2.1/2.2 A and AA rules, target-size included, nor of its best practices, on the page and on every
// widget alone in embed.html, at a phone's width in light and a desktop's in dark.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { startSite, DESKTOP, PHONE } from './harness.mjs';
import { errors, watch, mountAll, gotoAgain } from './page-helpers.mjs';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
const VIEWPORTS = [
  { name: '375', size: PHONE },
  { name: '1280', size: DESKTOP },
];
const SCHEMES = ['light', 'dark'];

/** Every widget embed.html serves, as its own error message lists them (so a new widget is checked too). */
async function embeddableWidgets(site) {
  const page = await site.newPage(DESKTOP);
  await page.goto(new URL('embed.html', site.url).href);
  const text = await page.locator('.embed-error').textContent();
  await page.close();
  const names = /one of ([a-z, -]+)\./.exec(text)?.[1].split(', ') ?? [];
  assert.ok(names.length >= 7, `embed.html lists its widgets: ${text}`);
  return names;
}

/**
 * Loads `path` at `viewport` in `scheme` in `page` (a new document each time: the audits of one test share a tab,
 * so only the first load is cold), waits until every widget is wired, runs `prepare(page)` (opening a disclosure),
 * and returns axe's violations.
 */
async function audit(site, page, path, viewport, scheme, prepare = async () => {}) {
  watch(page);
  await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme: scheme });
  await gotoAgain(page, new URL(path, site.url).href);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 120000 });
  await mountAll(page);
  // Off-screen chapters skip layout (content-visibility) until a reader scrolls to them; axe checks them laid out.
  await page.addStyleTag({ content: 'section.chapter { content-visibility: visible !important; }' });
  await page.evaluate(() => document.fonts.ready);
  // ...and with each equation fitted to its column, as web/fit-math.js does when a chapter comes into view.
  if (path === '/') await page.evaluate(() => import('/fit-math.js').then((m) => m.fitAll(document)));
  await prepare(page);
  // Evaluated through the debugging protocol, so the page's CSP (script-src 'self') does not apply to axe.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(
    (tags) =>
      window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }).then((r) =>
        r.violations.map((v) => ({
          id: v.id,
          help: v.help,
          nodes: v.nodes.map((n) => `${n.target.join(' >> ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`),
        })),
      ),
    TAGS,
  );
  assert.deepEqual(errors(page), [], `${path} loads without console errors`);
  return violations;
}

const describe = (violations) =>
  violations
    .map((v) => `${v.id} (${v.help}), ${v.nodes.length} nodes:\n  ${v.nodes.slice(0, 40).join('\n  ')}`)
    .join('\n');

/** Each width once and each scheme once: what a width changes is layout, what a scheme changes is colour, and
 *  page.test.mjs checks every text's contrast in both schemes besides. */
const PASSES = [
  [VIEWPORTS[0], SCHEMES[0]],
  [VIEWPORTS[1], SCHEMES[1]],
];

test('axe-core finds no WCAG 2.2 AA or best-practice violation on the page at 375 px light and 1280 px dark', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const found = [];
  const page = await site.newPage();
  for (const [{ name, size }, scheme] of PASSES) {
    const violations = await audit(site, page, '/', size, scheme);
    if (violations.length) found.push(`index.html at ${name} px, ${scheme}:\n${describe(violations)}`);
  }
  assert.ok(found.length === 0, found.join('\n\n'));
});

test('axe-core finds no violation on any widget alone in embed.html, at 375 px light and 1280 px dark', async (t) => {
  // Every widget is also on index.html, which the test above audits; alone in the frame each gets the same two passes.
  const site = await startSite();
  t.after(() => site.close());
  const widgets = await embeddableWidgets(site);
  const found = [];
  const page = await site.newPage();
  for (const widget of widgets)
    for (const [{ name, size }, scheme] of PASSES) {
      const violations = await audit(site, page, `/embed.html?widget=${widget}`, size, scheme);
      if (violations.length)
        found.push(`embed.html?widget=${widget} at ${name} px, ${scheme}:\n${describe(violations)}`);
    }
  assert.ok(found.length === 0, found.join('\n\n'));
  t.diagnostic(`${widgets.length} widgets x 2 passes (375 px light, 1280 px dark) checked: ${widgets.join(', ')}`);
});

test('axe-core finds no violation in an opened "More settings" (the step widget in embed.html, both passes)', async (t) => {
  // Closed, the disclosure's controls and lines are out of axe's view; opened, each folded control, its line and
  // its chapter name are checked (alone in the frame the line names the chapter without a link).
  const site = await startSite();
  t.after(() => site.close());
  const found = [];
  const page = await site.newPage();
  const openMore = (p) =>
    p.locator('tally-step').evaluate(async (el) => {
      await el.mount();
      el.shadowRoot.querySelector('details[data-out="more"]').open = true;
    });
  for (const [{ name, size }, scheme] of PASSES) {
    const violations = await audit(site, page, '/embed.html?widget=step', size, scheme, openMore);
    if (violations.length) found.push(`step's More settings at ${name} px, ${scheme}:\n${describe(violations)}`);
  }
  assert.ok(found.length === 0, found.join('\n\n'));
});
