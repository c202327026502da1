// Progressive disclosure (issue 37 item 5) on the built page: every widget shows only controls its chapter or an
// earlier one teaches (web/widgets/kit/taught.js, the table the widgets read), and every control folded behind
// "More settings" carries its line and, where a chapter teaches it, a link to that chapter's element on the page.
// A link that sets a folded field opens the disclosure; setState sets one while it stays folded.
import test from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, DESKTOP, PHONE, sitePage } from './harness.mjs';
import { open, errors } from './page-helpers.mjs';
import { CHAPTERS, TAUGHT } from '../../web/widgets/kit/taught.js';

const ORDER = Object.keys(CHAPTERS);
const TAGS = Object.keys(TAUGHT);

/** Every disclosure widget on the page, mounted: its chapter, shown fields and folded items as the DOM has them. */
async function widgetsOnPage(page, tags) {
  return page.evaluate(async (selector) => {
    const widgets = [...document.querySelectorAll(selector)];
    await Promise.all(widgets.map((w) => w.ready));
    return widgets.map((w) => {
      const root = w.shadowRoot;
      const more = root.querySelector('details[data-out="more"]');
      // The pasted config sits in the model's box: it is the model control's, not a field of its own.
      const fields = [...root.querySelectorAll('.field[data-field]')].filter((f) => f.dataset.field !== 'config');
      return {
        tag: w.localName,
        chapter: w.closest('section.chapter')?.id ?? null,
        all: fields.map((f) => f.dataset.field),
        shown: fields.filter((f) => !more?.contains(f)).map((f) => f.dataset.field),
        folded: [...(more?.querySelectorAll('.folded') ?? [])].map((item) => {
          const line = item.querySelector('.taught');
          const link = line?.querySelector('a');
          const control = item.querySelector('input, select, textarea');
          const href = link?.getAttribute('href') ?? null;
          return {
            name: item.dataset.folded,
            field: item.querySelector('.field')?.dataset.field,
            line: line?.textContent ?? '',
            href,
            resolves: href ? document.getElementById(href.slice(1)) !== null : null,
            described: (control?.getAttribute('aria-describedby') ?? '').split(/\s+/).includes(line?.id),
          };
        }),
      };
    });
  }, tags.join(', '));
}

test('every widget on the page shows only taught controls; each folded one has its line and chapter link', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/');
  const widgets = await widgetsOnPage(page, TAGS);
  assert.ok(widgets.length >= 6, `disclosure widgets on the page: ${widgets.length}`);
  let folded = 0;
  for (const w of widgets) {
    const where = `<${w.tag}> in #${w.chapter}`;
    assert.ok(ORDER.includes(w.chapter), `${where}: sits in a numbered chapter`);
    // The table names every control the widget has, and nothing else.
    assert.deepEqual([...w.all].sort(), Object.keys(TAUGHT[w.tag]).sort(), `${where}: kit/taught.js lists its fields`);
    for (const name of w.shown) {
      const chapter = TAUGHT[w.tag][name].chapter;
      assert.ok(
        chapter !== null && ORDER.indexOf(chapter) <= ORDER.indexOf(w.chapter),
        `${where} shows ${name}, taught ${chapter === null ? 'nowhere' : `in #${chapter}`}`,
      );
    }
    for (const item of w.folded) {
      folded += 1;
      const chapter = TAUGHT[w.tag][item.name].chapter;
      assert.equal(item.field, item.name, `${where}: folded item ${item.name} holds its control`);
      assert.ok(item.line.trim().length > 10, `${where}: ${item.name} has a line ("${item.line}")`);
      assert.ok(item.described, `${where}: ${item.name}'s control is described by its line`);
      if (chapter === null) assert.equal(item.href, null, `${where}: ${item.name} is taught nowhere, so no link`);
      else {
        assert.equal(item.href, `#${chapter}`, `${where}: ${item.name} links its chapter`);
        assert.equal(item.resolves, true, `${where}: #${chapter} is an element on the page`);
        assert.match(item.line, new RegExp(`Chapter ${CHAPTERS[chapter]} explains it\\.$`), item.name);
      }
    }
  }
  assert.ok(folded > 40, `folded controls on the page: ${folded}`);
  assert.deepEqual(errors(page), []);
});

test('a link that sets a folded field opens "More settings"; setState sets one while it stays folded', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#step-time');
  const step = page.locator('section#step-time tally-step');
  await step.evaluate((el) => el.ready);
  const more = step.locator('details[data-out="more"]');
  assert.equal(await more.evaluate((d) => d.open), false);
  assert.equal(await step.locator('[name="cp"]').isVisible(), false, 'context parallelism waits for chapter 8c');
  // setState applies to a folded field: the engine is asked with it, the disclosure stays as the reader left it.
  const args = await step.evaluate((el) => {
    el.setState({ cp: '2' });
    return el.lastCall.args;
  });
  assert.equal(args.cp, 2);
  assert.equal(await more.evaluate((d) => d.open), false);
  // A link that sets it opens the disclosure and shows the value.
  const key = await step.evaluate((el) => el.key);
  const linked = await site.newPage(DESKTOP);
  await open(site, linked, `/?${key}.cp=2#step-time`);
  const w = linked.locator('section#step-time tally-step');
  await w.evaluate((el) => el.ready);
  assert.equal(await w.locator('details[data-out="more"]').evaluate((d) => d.open), true);
  assert.ok(await w.locator('[name="cp"]').isVisible());
  assert.equal(await w.locator('[name="cp"]').inputValue(), '2');
  assert.equal(await w.evaluate((el) => el.lastCall.args.cp), 2);
  // Its line links chapter 8c, and following the link lands there.
  const link = w.locator('.folded[data-folded="cp"] .taught a');
  assert.equal(await link.getAttribute('href'), '#long-context');
  await link.click();
  await linked.waitForFunction(() => location.hash === '#long-context');
  assert.deepEqual([...errors(page), ...errors(linked)], []);
});

test('an embed without `controls` keeps its defaults, and its lines name the chapter without a dead link', async (t) => {
  const { site, page } = await sitePage(t);
  await page.goto(new URL('/embed.html?widget=step', site.url).href);
  const w = page.locator('tally-step');
  await w.evaluate((el) => el.mount());
  const shown = await w.evaluate((el) => {
    const more = el.shadowRoot.querySelector('details[data-out="more"]');
    return [...el.shadowRoot.querySelectorAll('.field[data-field]')]
      .filter((f) => !more.contains(f))
      .map((f) => f.dataset.field);
  });
  assert.ok(shown.includes('cp') && shown.includes('shard_group') && !shown.includes('tp_comm_overlap'), `${shown}`);
  const line = w.locator('.folded[data-folded="tp_comm_overlap"] .taught');
  assert.equal(await line.locator('a').count(), 0);
  assert.match(await line.textContent(), /Chapter 8b of the explainer explains it\.$/);
  assert.deepEqual(errors(page), []);
});

for (const [name, viewport] of [
  ['desktop', DESKTOP],
  ['phone', PHONE],
])
  test(`"More settings" of chapter 8b's step widget, opened (${name} screenshot when asked for)`, async (t) => {
    const { site, page } = await sitePage(t, viewport);
    await open(site, page, '/#step-time');
    const step = page.locator('section#step-time tally-step');
    await step.evaluate((el) => el.ready);
    await step.locator('details[data-out="more"] > summary').click();
    const more = step.locator('details[data-out="more"]');
    assert.equal(await more.evaluate((d) => d.open), true);
    // No folded item is wider than the widget (a line or a long select would scroll the phone sideways).
    const overflow = await step.evaluate((el) => {
      const box = el.shadowRoot.querySelector('.widget').getBoundingClientRect();
      return [...el.shadowRoot.querySelectorAll('.folded')]
        .filter((item) => item.getBoundingClientRect().right > box.right + 1)
        .map((item) => item.dataset.folded);
    });
    assert.deepEqual(overflow, []);
    await screenshot(more, `disclosure-step-${name}`);
  });
