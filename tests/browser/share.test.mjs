// The Share / embed control (web/widgets/kit/share.js) and the routes its snippets serve (docs/EMBEDDING.md): the
// snippets follow the widget's state and Copy puts them on the clipboard; the Markdown snippet rendered by
// markdown-it, the iframe snippet in a page whose CSP forbids scripts, and the script-tag snippets of every
// widget pasted into a plain page on another origin all show widgets that compute the engine's numbers.
import test from 'node:test';
import assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import { startSite, screenshot, DESKTOP, sitePage } from './harness.mjs';
import { open, setControl, errors, mountAll } from './page-helpers.mjs';
import { assertComputes, courseSite } from './kit-helpers.mjs';

const htmlPage = (body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course</title><link rel="icon" href="data:,"></head><body>\n${body}\n</body></html>`;

test("share: snippets follow the widget's state; the Markdown snippet (markdown-it) and the iframe snippet (no-script page) compute it", async (t) => {
  const site = await startSite();
  const context = await site.browser.newContext({
    viewport: DESKTOP,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`pageerror: ${e.message}`));
  await open(site, page, '/#memory');
  const widget = page.locator('section#memory tally-memory-budget');
  await widget.locator('details.share summary').click();
  await setControl(widget, 'gpus', '16');
  await setControl(widget, 'zero', '3');
  const markdownArea = widget.locator('.share-row[data-kind="markdown"] textarea');
  await page.waitForFunction(
    (el) => el.shadowRoot.querySelector('.share-row[data-kind="markdown"] textarea').value.includes('zero="3"'),
    await widget.elementHandle(),
  );
  const snippets = Object.fromEntries(
    await widget
      .locator('.share-row')
      .evaluateAll((rows) => rows.map((r) => [r.dataset.kind, r.querySelector('textarea').value])),
  );
  assert.match(snippets.url, /mem1\.gpus=16/, 'the link holds the new state');
  assert.match(snippets.script, /gpus="16"/);
  await widget.locator('.share-row[data-kind="markdown"] button').click();
  assert.equal(
    await page.evaluate(() => navigator.clipboard.readText()),
    await markdownArea.inputValue(),
    'Copy puts the snippet on the clipboard',
  );
  assert.match(await widget.locator('.share-status').last().textContent(), /copied/);

  // The Markdown snippet pasted into a lecture note, rendered by markdown-it as a static-site generator would.
  const md = new MarkdownIt({ html: true });
  const rendered = md.render(
    `# Lecture 5\n\nHow much memory per GPU?\n\n${snippets.markdown}\n\nThat is the budget.\n`,
  );
  assert.match(rendered, /<tally-memory-budget [^>]*gpus="16"/, 'markdown-it keeps the element as HTML');
  const markdownSite = await courseSite({ 'index.html': htmlPage(rendered) });
  // The iframe snippet in a page that allows no scripts (the optional resizer is blocked there, as it should be).
  const noScriptSite = await courseSite(
    { 'index.html': htmlPage(snippets.iframe) },
    "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src *",
  );
  t.after(async () => {
    await context.close();
    await site.close();
    await markdownSite.close();
    await noScriptSite.close();
  });

  const mdPage = await site.newPage(DESKTOP);
  await mdPage.goto(markdownSite.url);
  const fromMarkdown = await assertComputes(mdPage.locator('tally-memory-budget'), 'Markdown');
  assert.deepEqual([fromMarkdown.args.gpus, fromMarkdown.args.zero], [16, 3], 'the state the reader set');
  assert.equal(await mdPage.locator('a', { hasText: 'Open this figure in tally' }).getAttribute('href'), snippets.url);
  await screenshot(mdPage, 'route-markdown', { fullPage: true });

  const framePage = await site.newPage(DESKTOP);
  await framePage.goto(noScriptSite.url);
  const inFrame = await assertComputes(
    framePage.frameLocator('iframe').locator('tally-memory-budget'),
    'iframe snippet',
  );
  assert.deepEqual([inFrame.args.gpus, inFrame.args.zero], [16, 3]);
  assert.deepEqual([...errors(page), ...errors(mdPage), ...errors(framePage).filter((e) => !/script-src/.test(e))], []);
});

test("share: every widget's script-tag snippet, pasted into a plain page on another origin, computes the engine's numbers", async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/');
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await mountAll(page);
  await setControl(page.locator('tally-compute').first(), 'gpus', '2048');
  await setControl(page.locator('section#step-time tally-step'), 'tp', '8');
  const tags = ['tally-memory-budget', 'tally-compute', 'tally-float', 'tally-step', 'tally-roofline'];
  const snippets = await page.evaluate(async (tags) => {
    const { shareSnippets } = await import('/widgets/kit/share.js');
    return tags.map((tag) => shareSnippets(document.querySelector(tag)).script);
  }, tags);
  // One page with every snippet as pasted (the script tag repeated, as a reader pasting several would).
  const course = await courseSite({ 'index.html': htmlPage(snippets.join('\n<hr>\n')) });
  t.after(() => course.close());
  assert.notEqual(new URL(course.url).origin, new URL(site.url).origin);
  const host = await site.newPage(DESKTOP);
  await host.goto(course.url);
  for (const tag of tags) await assertComputes(host.locator(tag), tag);
  assert.equal(
    (await assertComputes(host.locator('tally-compute'), 'compute')).args.gpus,
    2048,
    'state from the snippet',
  );
  assert.equal((await assertComputes(host.locator('tally-step'), 'step')).args.tp, 8);
  await screenshot(host, 'route-script-tag', { fullPage: true });
  assert.deepEqual([...errors(page), ...errors(host)], []);
});
