// web/embed-resizer.js on a host page resizes only tally embeds, each by its own messages: the message's source
// must be the window of an iframe whose src is tally's embed.html (beside the resizer) and its origin that src's.
// A third-party frame, a non-embed page of the tally site, and a tally frame navigated to another origin post
// the same {type: 'tally-embed-height', height} and keep their height.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP } from './harness.mjs';
import { errors } from './page-helpers.mjs';
import { courseSite } from './kit-helpers.mjs';

const page = (
  body,
) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course page</title><link rel="icon" href="data:,"></head>
<body><h1>Lecture 3</h1>${body}</body></html>`;

test('embed-resizer.js resizes a tally embed and ignores the same message from any other frame', async (t) => {
  const site = await startSite();
  const third = await courseSite({ 'ad.html': page('<p>an advertisement</p>') });
  const embed = `${site.url}embed.html?widget=float&format=e4m3&value=500`;
  const frames = {
    tally: embed,
    // Another origin altogether (an ad, another site's widget).
    ad: `${third.url}ad.html`,
    // The tally site's origin, but not its embed page.
    notEmbed: `${site.url}embed-resizer.js`,
    // A tally embed's src, but the frame now shows another origin's page.
    moved: embed,
  };
  const host = await courseSite(
    {
      'index.html': page(`<script src="${site.url}embed-resizer.js"></script>
${Object.entries(frames)
  .map(
    ([id, src]) =>
      `<iframe id="${id}" src="${src.replace(/&/g, '&amp;')}" title="${id}" width="100%" height="300" style="border:0"></iframe>`,
  )
  .join('\n')}`),
    },
    `default-src 'none'; script-src ${site.url}; style-src 'unsafe-inline'; img-src data:; frame-src *`,
  );
  t.after(async () => {
    await site.close();
    await host.close();
    await third.close();
  });
  assert.equal(new Set([site.url, host.url, third.url].map((u) => new URL(u).origin)).size, 3, 'three origins');
  const tab = await site.newPage(DESKTOP);
  await tab.goto(host.url);
  const frameOf = async (id) => (await tab.locator(`#${id}`).elementHandle()).contentFrame();
  await (await frameOf('moved')).goto(`${third.url}ad.html`);

  // What the resizer did with each message, read by a listener added after the resizer's: listeners run in the
  // order they were added, so this one sees the frame's height just after the resizer handled the message.
  await tab.evaluate(() => {
    window.seen = [];
    addEventListener('message', (event) => {
      const frame = [...document.querySelectorAll('iframe')].find((f) => f.contentWindow === event.source);
      if (event.data?.type === 'tally-embed-height' && event.data.height === 1234)
        window.seen.push({ id: frame?.id, height: frame?.style.height });
    });
  });
  const post = async (id) => {
    const before = await tab.evaluate((i) => document.getElementById(i).style.height, id);
    await (await frameOf(id)).evaluate(() => parent.postMessage({ type: 'tally-embed-height', height: 1234 }, '*'));
    await tab.waitForFunction((i) => window.seen.some((s) => s.id === i), id);
    return { before, after: (await tab.evaluate((i) => window.seen.find((s) => s.id === i), id)).height };
  };
  for (const id of ['ad', 'notEmbed', 'moved']) {
    const { before, after } = await post(id);
    assert.equal(after, before, `${id}: posting the tally message does not resize it`);
    assert.notEqual(after, '1234px', id);
  }
  assert.equal(await tab.evaluate(() => document.getElementById('ad').getBoundingClientRect().height), 300);
  // The tally embed still is resized: by its own messages, and to the height a message names.
  await tab.waitForFunction(() => document.getElementById('tally').style.height !== '');
  assert.equal((await post('tally')).after, '1234px');
  assert.deepEqual(errors(tab), []);
});
