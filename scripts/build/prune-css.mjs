// Keeps only the CSS rules a page can match. KaTeX's stylesheet has about 230 rules for every construct KaTeX
// can typeset; the page uses a few dozen of its classes, and the browser matches every rule against every
// element on the first layout (measured: BENCHMARKS.md, page load). A selector survives when every class it
// names occurs in the page; @font-face, @keyframes and other at-rules are kept whole, @media is pruned inside.

/** Top-level blocks of a stylesheet: [{prelude, body}] where body is the text between the outer braces. */
function blocks(css) {
  const out = [];
  let depth = 0;
  let start = 0;
  let open = -1;
  for (let i = 0; i < css.length; i++) {
    const c = css[i];
    if (c === '"' || c === "'") {
      // strings may hold braces (content:"{")
      const end = css.indexOf(c, i + 1);
      i = end < 0 ? css.length : end;
    } else if (c === '{') {
      if (depth++ === 0) open = i;
    } else if (c === '}' && --depth === 0) {
      out.push({ prelude: css.slice(start, open).trim(), body: css.slice(open + 1, i) });
      start = i + 1;
    }
  }
  if (depth !== 0) throw new Error('prune-css: unbalanced braces');
  return out;
}

/** Splits a selector list on its top-level commas (not those inside :is(...), :not(...)). */
function selectors(prelude) {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < prelude.length; i++) {
    if (prelude[i] === '(') depth++;
    else if (prelude[i] === ')') depth--;
    else if (prelude[i] === ',' && depth === 0) {
      out.push(prelude.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(prelude.slice(start).trim());
  return out;
}

const CLASS = /\.(-?[_a-zA-Z][-_a-zA-Z0-9]*)/g;

function pruneRules(css, used) {
  const kept = [];
  for (const { prelude, body } of blocks(css)) {
    if (prelude.startsWith('@media') || prelude.startsWith('@supports')) {
      const inner = pruneRules(body, used);
      if (inner) kept.push(`${prelude}{${inner}}`);
    } else if (prelude.startsWith('@')) {
      kept.push(`${prelude}{${body}}`);
    } else {
      const live = selectors(prelude).filter((s) => [...s.matchAll(CLASS)].every((m) => used.has(m[1])));
      if (live.length) kept.push(`${live.join(',')}{${body}}`);
    }
  }
  return kept.join('');
}

const FAMILY = /font-family:\s*("?)([^;}",]+)\1/;

/**
 * The rules of `css` whose selectors can match a page using only the classes in `used` (a Set), and the
 * @font-face rules of the families those rules or `otherCss` (the page's own stylesheet) name.
 */
export function pruneCss(css, used, otherCss = '') {
  const rules = pruneRules(css.replace(/\/\*[\s\S]*?\*\//g, ''), used);
  const faces = [];
  const rest = [];
  for (const { prelude, body } of blocks(rules)) (prelude === '@font-face' ? faces : rest).push(`${prelude}{${body}}`);
  const named = rest.join('') + otherCss;
  const live = faces.filter((face) => {
    const family = FAMILY.exec(face)?.[2].trim();
    return family && named.includes(family);
  });
  return [...live, ...rest].join('');
}

/** Every class name in an HTML text's class="..." attributes. */
export function classesIn(html) {
  const used = new Set();
  for (const m of html.matchAll(/\sclass="([^"]*)"/g)) for (const name of m[1].split(/\s+/)) if (name) used.add(name);
  return used;
}
