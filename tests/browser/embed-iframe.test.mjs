// The iframe route (docs/EMBEDDING.md): a course page on another origin whose CSP forbids every script embeds
// embed.html?widget=...; the widget inside computes the engine's numbers, fits a default height and scrolls
// inside the frame. On a page that allows web/embed-resizer.js, the frame grows to the height it posts.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, DESKTOP } from './harness.mjs';
import { errors } from './page-helpers.mjs';
import { assertComputes, courseSite } from './kit-helpers.mjs';

const page = (
  body,
) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course page</title><link rel="icon" href="data:,"></head>
<body><h1>Lecture 3</h1>${body}</body></html>`;

test("iframe: in a host page whose CSP forbids scripts, embed.html widgets compute the engine's numbers and scroll inside a default height", async (t) => {
  const site = await startSite();
  const frames = [
    `${site.url}embed.html?widget=memory-budget&model=llama-3-8b&gpus=8&zero=3&recompute=selective&seq=8192`,
    `${site.url}embed.html?widget=compute&model=llama-3-8b&tokens=15e12&gpus=256&mfu=0.4&price=2.5`,
    `${site.url}embed.html?widget=float&format=e4m3&value=500`,
  ];
  const host = await courseSite(
    {
      'index.html': page(`<script>window.hostScriptRan = true;</script>
${frames.map((src, i) => `<iframe id="f${i}" src="${src.replace(/&/g, '&amp;')}" title="tally widget" width="100%" height="480" style="border:0"></iframe>`).join('\n')}`),
    },
    "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src *",
  );
  t.after(async () => {
    await site.close();
    await host.close();
  });
  assert.notEqual(new URL(host.url).origin, new URL(site.url).origin, 'two origins');

  const tab = await site.newPage(DESKTOP);
  await tab.goto(host.url);
  assert.equal(await tab.evaluate(() => window.hostScriptRan ?? false), false, 'the host page runs no script');
  const tags = ['tally-memory-budget', 'tally-compute', 'tally-float'];
  for (const [i, tag] of tags.entries()) {
    const frame = tab.frameLocator(`#f${i}`);
    const widget = frame.locator(tag);
    await widget.waitFor();
    const shown = await assertComputes(widget, tag);
    if (tag === 'tally-memory-budget')
      assert.deepEqual([shown.args.gpus, shown.args.zero, shown.args.seq], [8, 3, 8192], 'state from the query');
  }
  // No resizer: the frame keeps its 480 px and the widget scrolls inside it.
  const memoryFrame = tab.frames().find((f) => f.url().includes('memory-budget'));
  const inner = await memoryFrame.evaluate(() => ({
    scroll: document.documentElement.scrollHeight,
    view: innerHeight,
  }));
  assert.equal(inner.view, 480);
  assert.ok(inner.scroll > inner.view, `the memory widget (${inner.scroll} px) scrolls inside the 480 px frame`);
  await screenshot(tab, 'route-iframe-noscript', { fullPage: true });
  // The one console error expected: the browser refusing the host's own inline script.
  assert.deepEqual(
    errors(tab).filter((e) => !/inline script/.test(e)),
    [],
  );
});

test('iframe: embed-resizer.js on the host fits the frame to the height embed.html posts', async (t) => {
  const site = await startSite();
  const src = `${site.url}embed.html?widget=memory-budget&model=llama-2-7b&gpus=8`;
  const host = await courseSite(
    {
      'index.html': page(`<script src="${site.url}embed-resizer.js"></script>
<iframe id="f" src="${src.replace(/&/g, '&amp;')}" title="tally widget" width="100%" height="300" style="border:0"></iframe><p>after</p>`),
    },
    `default-src 'none'; script-src ${site.url}; style-src 'unsafe-inline'; img-src data:; frame-src *`,
  );
  t.after(async () => {
    await site.close();
    await host.close();
  });
  const tab = await site.newPage(DESKTOP);
  await tab.goto(host.url);
  await assertComputes(tab.frameLocator('#f').locator('tally-memory-budget'), 'memory');
  const frame = tab.frames().find((f) => f.url().includes('memory-budget'));
  await tab.waitForFunction(() => document.getElementById('f').getBoundingClientRect().height > 300);
  // The resize settles once the frame stops growing; then its content fits it exactly.
  await tab.waitForFunction(async () => {
    const h = document.getElementById('f').getBoundingClientRect().height;
    await new Promise((r) => setTimeout(r, 300));
    return document.getElementById('f').getBoundingClientRect().height === h;
  });
  const outer = await tab.evaluate(() => document.getElementById('f').getBoundingClientRect().height);
  const content = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  assert.equal(outer, content, 'the iframe is as tall as the widget page');
  assert.equal(
    await frame.evaluate(() => document.documentElement.scrollHeight <= innerHeight),
    true,
    'no inner scrollbar',
  );
  await screenshot(tab, 'route-iframe-resized', { fullPage: true });
  assert.deepEqual(errors(tab), []);
});
