// The prerendered page read as text, for the tests of what the prose holds (takeaways, the running example).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { siteDir } from './engine.mjs';

/** build/site/index.html's text. */
export const pageHtml = () => readFileSync(path.join(siteDir, 'index.html'), 'utf8');

/** Each chapter section of `html`: its id, its heading's number ("8b", null for the unnumbered) and its markup. */
export const chaptersOf = (html) =>
  html
    .split('<section class="chapter" id="')
    .slice(1)
    .map((chunk) => ({
      id: chunk.slice(0, chunk.indexOf('"')),
      number: /<h1[^>]*>\s*(\d+[a-z]?)\./.exec(chunk)?.[1] ?? null,
      html: chunk,
    }));

/** Text with engine values, formulas and markup taken out: what remains was typed. */
export const typedText = (markup) =>
  markup
    .replace(/<tally-value\b[\s\S]*?<\/tally-value>/g, ' ')
    .replace(/<span class="katex(?:-display)?">[\s\S]*?<\/annotation><\/semantics><\/math><\/span>(?:<\/span>)?/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z]+;|&#\d+;/g, ' ');
