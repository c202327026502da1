// Each chapter's closing "What to remember" box and chapter 8a's table of the parallelism methods, in the prerendered
// page (build/site/index.html): every numbered chapter ends with a box of three lines, and neither the boxes nor the
// table types a number; a number there is a <tally-value> the engine computed (tests/node/page-numbers.test.mjs
// checks its value) or part of a formula.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chaptersOf, pageHtml, typedText } from './page-text.mjs';

const html = pageHtml();
const chapters = chaptersOf(html);
// Chapter 9's box comes with its serving rewrite (issue 37, item 6), edited apart from this change.
const PENDING = new Set();

// Digits that name things, not quantities: chapters, format and stage names, the 1F1B schedule.
const NAMES =
  /\bchapters? \d+[a-z]?(?:(?:,| and| or) \d+[a-z]?)*\b|\b(?:fp|bf|int|e\dm)\d+\b|\bZeRO-\d\b|\b1F1B\b|\bH100\b|\bA100\b/gi;
const typedNumbers = (markup) => typedText(markup).replace(NAMES, ' ').match(/\d+/g) ?? [];

test('every numbered chapter ends with a "What to remember" box of three lines', () => {
  const numbered = chapters.filter((c) => c.number);
  assert.ok(numbered.length >= 14, `${numbered.length} numbered chapters`);
  for (const c of numbered) {
    const boxes = [...c.html.matchAll(/<aside class="takeaways" aria-labelledby="([^"]+)">([\s\S]*?)<\/aside>/g)];
    if (PENDING.has(c.id)) continue;
    assert.equal(boxes.length, 1, `chapter ${c.number} (${c.id}) has one takeaway box`);
    const [, labelledBy, box] = boxes[0];
    assert.match(
      box,
      new RegExp(`<h2 id="${labelledBy}">What to remember from chapter ${c.number}</h2>`),
      `chapter ${c.number}: the box is named by its own heading`,
    );
    assert.equal((box.match(/<li>/g) ?? []).length, 3, `chapter ${c.number}: three lines`);
    const rest = c.html.slice(c.html.indexOf('</aside>', boxes[0].index) + '</aside>'.length);
    assert.equal(rest.replace(/<\/section>[\s\S]*$/, '').trim(), '', `chapter ${c.number}: the box closes the chapter`);
  }
});

test('no takeaway box types a number: each is an engine value or part of a formula', () => {
  const boxes = [...html.matchAll(/<aside class="takeaways"[\s\S]*?<\/aside>/g)].map((m) => m[0]);
  assert.ok(boxes.length >= 13, `${boxes.length} boxes`);
  for (const box of boxes) assert.deepEqual(typedNumbers(box), [], typedText(box).replace(/\s+/g, ' ').slice(0, 120));
  // The check itself: a typed figure is caught, a computed one and a chapter's name are not.
  assert.deepEqual(typedNumbers('<li>about 16 bytes in chapters 8 and 8b</li>'), ['16']);
  assert.deepEqual(
    typedNumbers('<li><tally-value method="m" field="f" data-state="ok">295</tally-value> in bf16</li>'),
    [],
  );
});

test("chapter 8a's table sets the seven parallelism methods side by side, in words, on all four questions", () => {
  const communication = chapters.find((c) => c.id === 'communication');
  const table = /<figure class="synthesis" id="fig-parallelism-methods">([\s\S]*?)<\/figure>/.exec(
    communication.html,
  )?.[1];
  assert.ok(table, 'the table is in chapter 8a');
  const head = [...table.matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  assert.deepEqual(head, ['Method', 'Divides', 'Sends', 'Over', 'Use it when']);
  const rows = [...table.matchAll(/<tr role="row"><th scope="row"[^>]*>([^<]*)<\/th>([\s\S]*?)<\/tr>/g)];
  const methods = rows.map((r) => r[1]);
  for (const method of ['Data', 'ZeRO', 'Tensor', 'Sequence', 'Pipeline', 'Context', 'Expert'])
    assert.ok(
      methods.some((m) => m.startsWith(method)),
      `a row for ${method} (rows: ${methods.join(', ')})`,
    );
  assert.equal(rows.length, 7);
  for (const [, method, cells] of rows) {
    const labels = [...cells.matchAll(/<td role="cell" data-label="([^"]+)">([^<]+)<\/td>/g)];
    assert.deepEqual(
      labels.map((l) => l[1]),
      head.slice(1),
      `${method}: a cell per question, labelled for the phone layout`,
    );
  }
  assert.deepEqual(typedNumbers(table), [], 'the table types no number');
});
