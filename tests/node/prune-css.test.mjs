// scripts/build/prune-css.mjs: the page ships KaTeX's stylesheet with only the rules its classes can match.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { classesIn, pruneCss } from '../../scripts/build/prune-css.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('a selector survives only when every class it names is on the page; a rule keeps its surviving selectors', () => {
  const css = '.katex .mord{color:red}.katex .mfrac .frac-line{border:1px}.a,.katex .b{x:1}svg{display:block}';
  assert.equal(
    pruneCss(css, new Set(['katex', 'mord', 'b'])),
    '.katex .mord{color:red}.katex .b{x:1}svg{display:block}',
  );
});

test('@media is pruned inside and dropped when empty; comments and braces inside strings do not confuse it', () => {
  const css = '/* {x} */@media screen{.used{a:1}.gone{b:2}}@media print{.gone{c:3}}.used:before{content:"{"}';
  assert.equal(pruneCss(css, new Set(['used'])), '@media screen{.used{a:1}}.used:before{content:"{"}');
});

test("a @font-face stays only for a family that a kept rule or the page's own stylesheet names", () => {
  const css =
    '@font-face{font-family:KaTeX_Main;src:url(a)}@font-face{font-family:"KaTeX_AMS";src:url(b)}' +
    '@font-face{font-family:KaTeX_Size1;src:url(c)}.x{font-family:KaTeX_Size1}.ams{font-family:KaTeX_AMS}';
  assert.equal(
    pruneCss(css, new Set(['x']), 'math{font-family:KaTeX_Main,serif}'),
    '@font-face{font-family:KaTeX_Main;src:url(a)}@font-face{font-family:KaTeX_Size1;src:url(c)}.x{font-family:KaTeX_Size1}',
  );
});

test('classesIn reads every class of every class attribute', () => {
  assert.deepEqual([...classesIn('<p class="a  b"><span class="c">x</span><i class="">')].sort(), ['a', 'b', 'c']);
});

test("KaTeX's own stylesheet prunes to a fraction and keeps the rules of the classes it is given", () => {
  const css = readFileSync(path.join(root, 'node_modules/katex/dist/katex.min.css'), 'utf8');
  const used = new Set(['katex', 'katex-display', 'katex-html', 'mfrac', 'frac-line', 'mord']);
  const pruned = pruneCss(css, used);
  assert.ok(pruned.length < css.length / 3, `${pruned.length} of ${css.length} bytes`);
  assert.match(pruned, /\.katex \.mfrac \.frac-line\{/);
  assert.doesNotMatch(pruned, /\.katex \.overline/, 'a class absent from the page');
  assert.doesNotMatch(pruned, /KaTeX_Fraktur/, 'no kept rule names the Fraktur font');
});
