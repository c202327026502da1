// The running example (issue 37 item 2): Llama 3 70B, 15T tokens, 1,024 H100s. Every numbered chapter but 8e (whose
// sizing list is the example itself) and 10 (its one-page summary) closes its text with a box that comes back to it;
// each box shows at least one engine value, and every other figure in it is one of the run's stated inputs or a
// citation, never a typed result (tests/node/page-numbers.test.mjs checks the engine values).
import test from 'node:test';
import assert from 'node:assert/strict';
import { chaptersOf, pageHtml, typedText as typed } from './page-text.mjs';

const chapters = chaptersOf(pageHtml());
const OWN = new Set(['8e', '10']);

// The run as chapter 10 states it (model, tokens, GPUs, sequence, layout, price) and Llama 3's long-context stage,
// chapter names and the paper's citation: figures a reader is given, not results.
const GIVEN =
  /\bLlama 3(?: 70B)?|\b15T\b|\b1,024\b|\b8,192\b|\b131,072\b|\b16 GPUs\b|\b16 sequences\b|\btensor(?:-parallel group of)? 8\b|\bpipeline 4\b|\$2 per\b|\bH100s?\b|\bZeRO-1\b|\bbf16\b|\bchapters? \d+[a-z]?\b|\bDubey et al\. 2024, sec\. [\d.]+ and Table \d+\b/gi;

test('every numbered chapter but 8e and 10 comes back to the running example in one box', () => {
  const numbered = chapters.filter((c) => c.number);
  assert.ok(numbered.length >= 15, `${numbered.length} numbered chapters`);
  for (const c of numbered) {
    const boxes = [...c.html.matchAll(/<aside class="running-example" aria-labelledby="([^"]+)">([\s\S]*?)<\/aside>/g)];
    if (OWN.has(c.number)) {
      assert.equal(boxes.length, 0, `chapter ${c.number} is the example's own`);
      continue;
    }
    assert.equal(boxes.length, 1, `chapter ${c.number} (${c.id}) has one running-example box`);
    const [, labelledBy, box] = boxes[0];
    assert.match(
      box,
      new RegExp(`<h2 id="${labelledBy}">The running example in chapter ${c.number}</h2>`),
      `chapter ${c.number}: named`,
    );
    assert.ok((box.match(/<tally-value\b/g) ?? []).length >= 1, `chapter ${c.number}: at least one engine value`);
    const left =
      typed(box)
        .replace(GIVEN, ' ')
        .match(/\d[\d,.]*/g) ?? [];
    assert.deepEqual(left, [], `chapter ${c.number}: typed figures ${typed(box).replace(/\s+/g, ' ').slice(0, 160)}`);
  }
});

test('the typed-figure check catches a typed result and lets a given input through', () => {
  assert.deepEqual(
    typed('<p>on 1,024 H100s it takes 54 days</p>')
      .replace(GIVEN, ' ')
      .match(/\d[\d,.]*/g),
    ['54'],
  );
});
