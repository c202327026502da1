// Progressive disclosure (issue 37 item 5), read from the prerendered page (build/site/index.html) and the one table
// of where each control is taught (web/widgets/kit/taught.js): the table's chapters are the page's, in its order and
// with its numbers, and every widget embed's `controls` attribute names only fields its chapter or an earlier one
// teaches (an embed without one shows every field, so all of them must be taught by then). The rendered panels,
// their lines and links, are tests/browser/disclosure.test.mjs's.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { siteDir } from './engine.mjs';
import { CHAPTERS, TAUGHT } from '../../web/widgets/kit/taught.js';

const html = readFileSync(path.join(siteDir, 'index.html'), 'utf8');
/** Each numbered chapter section of the page: its id, its heading's number ("8b") and its markup. */
const chapters = html
  .split('<section class="chapter" id="')
  .slice(1)
  .map((chunk) => ({
    id: chunk.slice(0, chunk.indexOf('"')),
    number: /<h1[^>]*>\s*(\d+[a-z]?)\./.exec(chunk)?.[1] ?? null,
    html: chunk,
  }))
  .filter((c) => c.number !== null);
const ORDER = Object.keys(CHAPTERS);

/** The widget embeds of a chapter's markup whose tag the table knows: [{tag, controls (null: none)}]. */
function embeds(markup) {
  const found = [];
  for (const match of markup.matchAll(/<(tally-[a-z-]+)\b([^>]*)>/g)) {
    if (!(match[1] in TAUGHT)) continue;
    const controls = /\bcontrols="([^"]*)"/.exec(match[2])?.[1];
    found.push({ tag: match[1], controls: controls === undefined ? null : controls.split(',').map((n) => n.trim()) });
  }
  return found;
}

test("kit/taught.js's chapters are the page's numbered chapters, in order, with their headings' numbers", () => {
  assert.deepEqual(
    chapters.map((c) => [c.id, c.number]),
    Object.entries(CHAPTERS),
  );
  for (const [tag, fields] of Object.entries(TAUGHT))
    for (const [name, entry] of Object.entries(fields))
      assert.ok(entry.chapter === null || entry.chapter in CHAPTERS, `${tag} ${name}: chapter ${entry.chapter}`);
});

test('every widget embed shows only fields its chapter or an earlier one teaches', () => {
  let checked = 0;
  for (const chapter of chapters)
    for (const { tag, controls } of embeds(chapter.html)) {
      const names = controls ?? Object.keys(TAUGHT[tag]);
      for (const name of names) {
        const entry = TAUGHT[tag][name];
        assert.ok(entry, `<${tag}> in #${chapter.id}: controls names ${name}, which kit/taught.js does not list`);
        assert.ok(
          entry.chapter !== null && ORDER.indexOf(entry.chapter) <= ORDER.indexOf(chapter.id),
          `<${tag}> in #${chapter.id} shows ${name}, taught ${entry.chapter === null ? 'nowhere' : `in #${entry.chapter}`}`,
        );
        checked += 1;
      }
    }
  assert.ok(checked >= 60, `shown fields checked: ${checked}`);
});

test("the rule is not vacuous: an embed that showed a later chapter's field would fail it", () => {
  // Chapter 6's memory widget with tensor parallelism shown: taught in chapter 8, so refused.
  const six = ORDER.indexOf('memory');
  assert.ok(ORDER.indexOf(TAUGHT['tally-memory-budget'].tp.chapter) > six);
  // And the fields chapter 6 does show are all taught by then.
  const shown = embeds(chapters.find((c) => c.id === 'memory').html)[0].controls;
  assert.ok(shown.includes('recipe') && !shown.includes('tp'), `${shown}`);
});
