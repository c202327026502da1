// Assembles the static site: web/ + rendered content/chapters + the wasm engine -> build/site.
// usage: node scripts/build/build-site.mjs --wasm build/wasm --out build/site
//
// Markdown is rendered by markdown-it and math by KaTeX (through @vscode/markdown-it-katex), both at
// build time, so the page shows every formula without running a script. Every inline engine number
// (<tally-value>) and the recipe table are computed here by the same wasm engine the page loads, so the
// text reads complete with scripts off; interactive widgets stay placeholders that web/widgets/*.js
// upgrade in the browser. Figures and curves come from web/figures/ (one module per figure; SVG, inlined; web/curves.js redraws the
// curves in the browser from the widget beside each).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import MarkdownIt from 'markdown-it';
import markdownItKatex from '@vscode/markdown-it-katex';
import katex from 'katex';
import { transform } from 'esbuild';
import { PAGE_CSP } from './csp.mjs';
import { classesIn, pruneCss } from './prune-css.mjs';
import { failer, pathOption, root } from './options.mjs';
import { ENGINE_MODULE, engineModuleText } from './engine-module.mjs';
import { withRunsFile } from './runs-file.mjs';

const wasmDir = pathOption('--wasm', 'build/wasm');
const outDir = pathOption('--out', 'build/site');
const katexDir = path.join(root, 'node_modules/katex/dist');
const fail = failer('build-site');

for (const file of ['tally.js', 'tally.wasm'])
  if (!existsSync(path.join(wasmDir, file)))
    fail(`${path.join(wasmDir, file)} is missing: build the wasm engine first`);
if (!existsSync(katexDir)) fail('node_modules/katex is missing: run npm ci first');

// The engine, in node: Emscripten 3.1.6's loader cannot read a file path under node 20, so it gets the bytes.
const engine = await (async () => {
  const createTallyModule = createRequire(import.meta.url)(path.join(wasmDir, 'tally.js'));
  const module = await createTallyModule({ wasmBinary: readFileSync(path.join(wasmDir, 'tally.wasm')) });
  return {
    call(method, args = {}) {
      const envelope = JSON.parse(module.tally_call(String(method), JSON.stringify(args)));
      if (!envelope.ok) throw new Error(`${envelope.error.field}: ${envelope.error.message}`);
      return envelope.result;
    },
  };
})();
// The page's own formatting code (web/widgets/value.js), so prerendered text equals what the browser
// shows. Its module defines custom elements; in node those names only need to exist.
globalThis.HTMLElement ??= class {};
// web/ holds ES modules without a package.json "type" (the Emscripten glue beside them must stay CommonJS);
// node's one-line notice about reparsing them says nothing about the build.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) =>
  String(warning).includes('parse as CommonJS') ? undefined : emitWarning(warning, ...rest);
globalThis.customElements ??= { define() {}, get() {} };
const { valueText, recipesTableHtml } = await import(pathToFileURL(path.join(root, 'web/widgets/value.js')).href);
const { renderFigure } = await import(pathToFileURL(path.join(root, 'web/figures/index.js')).href);

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
cpSync(path.join(root, 'web'), outDir, { recursive: true });
// The engine: tally.js (Emscripten glue) and tally.wasm, plus any other tally* artefact (worker builds).
for (const file of readdirSync(wasmDir).filter((f) => /^tally.*\.(js|wasm)$/.test(f)))
  cpSync(path.join(wasmDir, file), path.join(outDir, file));
// The same glue as an ES module (ENGINE_MODULE), which engine.js imports: every bundler follows an import (webpack,
// Rspack, Turbopack, Vite, esbuild), where a classic script found by a global name is renamed or wrapped by some.
// Its UMD names are parameters here, so no bundler resolves the glue's node-only require("fs") or rewrites its
// export; a browser never takes that branch.
writeFileSync(path.join(outDir, ENGINE_MODULE), engineModuleText(readFileSync(path.join(wasmDir, 'tally.js'), 'utf8')));

// KaTeX: the fonts for the prerendered math (its stylesheet, pruned to the page's classes, is written with the
// page below). No KaTeX code ships: every formula is typeset at build time.
const vendor = path.join(outDir, 'vendor/katex');
mkdirSync(vendor, { recursive: true });
cpSync(path.join(katexDir, 'fonts'), path.join(vendor, 'fonts'), { recursive: true });

// Optional GPU measurements for the roofline widget (scripts/bench/verify-gpu.sh writes them on a machine with a
// GPU); served as gpu-report.json when present, otherwise the widget shows the CPU measurement only.
const gpuReportDir = pathOption('--gpu-report', 'build/gpu-report');
const gpuReport = ['roofline.json', 'report.json']
  .map((name) => path.join(gpuReportDir, name))
  .find((file) => existsSync(file));
if (gpuReport) cpSync(gpuReport, path.join(outDir, 'gpu-report.json'));
else
  // An empty report rather than a 404 in every reader's console.
  writeFileSync(
    path.join(outDir, 'gpu-report.json'),
    JSON.stringify({
      note: 'no GPU measurements: run scripts/bench/verify-gpu.sh on a machine with an NVIDIA GPU',
      points: [],
    }) + '\n',
  );

// Every module in web/widgets that defines a custom element is registered by one entry script; a course
// page includes only this file to use every widget.
const widgetFiles = readdirSync(path.join(root, 'web/widgets'))
  .filter((f) => f.endsWith('.js') && !f.endsWith('-worker.js'))
  .filter((f) => /(\.define|defineWidget)\(\s*['"]tally-/.test(readFileSync(path.join(root, 'web/widgets', f), 'utf8')))
  .sort();
// embed.html loads one widget's module by name (web/embed.js, WIDGET_MODULES): each widget must be listed there.
const embedModules = new Map(
  [
    ...readFileSync(path.join(root, 'web/embed.js'), 'utf8').matchAll(
      /'?([a-z-]+)'?: \(\) => import\('\.\/widgets\/([a-z-]+\.js)'\)/g,
    ),
  ].map((m) => [`tally-${m[1]}`, m[2]]),
);
for (const file of widgetFiles) {
  const source = readFileSync(path.join(root, 'web/widgets', file), 'utf8');
  for (const [, tag] of source.matchAll(/\w+\.define\(\s*'(tally-[a-z-]+)'\s*\)/g))
    if (embedModules.get(tag) !== file)
      fail(`web/embed.js WIDGET_MODULES has no entry ${tag.replace(/^tally-/, '')}: () => import('./widgets/${file}')`);
}
writeFileSync(
  path.join(outDir, 'tally-widgets.js'),
  '// Generated by scripts/build/build-site.mjs: include this one script to use every tally widget.\n' +
    widgetFiles.map((f) => `import './widgets/${f}';`).join('\n') +
    '\n',
);

// ---------------------------------------------------------------------------------------------------
// Chapters
// ---------------------------------------------------------------------------------------------------

const md = new MarkdownIt({ html: true, linkify: false, typographer: true });
// Math is MathML only (KaTeX's `output: 'mathml'`), which browsers lay out natively: KaTeX's HTML copy of each
// formula more than doubled the page's elements (3,520 of 8,058) and most of its layout work. Formulas that need
// a stretched or enlarged glyph (braces, roots, big operators, \left/\right, environments) keep the HTML copy:
// MathML stretches glyphs only with an OpenType MATH font, and KaTeX's fonts (which the page ships) have none.
const NEEDS_KATEX_HTML =
  /\\(?:underbrace|overbrace|sqrt|big|Big|bigg|Bigg|left|right|prod|sum|int|begin|overline|underline|widehat|overrightarrow)\b/;
const mathOutput = (latex) => (NEEDS_KATEX_HTML.test(latex) ? 'htmlAndMathml' : 'mathml');
md.use(markdownItKatex.default ?? markdownItKatex, {
  throwOnError: true,
  katex: {
    ...katex,
    renderToString: (latex, options) => katex.renderToString(latex, { ...options, output: mathOutput(latex) }),
  },
});
// MathML display math gets the .katex-display wrapper of KaTeX's HTML output (web/fit-math.js and style.css use
// it), and a one-letter <mi> is marked for KaTeX's italic math font (style.css): the browser's own italic for it
// maps to Unicode math letters, which KaTeX's fonts lack, so they would come from another font.
const finishMathml = (html) =>
  html
    .replace(
      /<span class="katex">(<math[^>]*display="block"[\s\S]*?<\/math>)<\/span>/g,
      '<span class="katex-display"><span class="katex">$1</span></span>',
    )
    .replace(/<mi>([^<]|[\ud800-\udbff][\udc00-\udfff])<\/mi>/g, '<mi class="var">$1</mi>');

/** Splits "---\nkey: value\n---\n" front matter from the body (only flat `key: value` lines are used). */
function frontMatter(text, file) {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) return { meta: {}, body: text };
  const meta = {};
  for (const line of match[1].split('\n')) {
    const kv = /^([a-z_]+):\s*(.*)$/.exec(line.trim());
    if (!kv) fail(`${file}: front matter line "${line}" is not "key: value"`);
    meta[kv[1]] = kv[2];
  }
  return { meta, body: text.slice(match[0].length) };
}

const WIDGET_TAGS = [
  'tally-memory-budget',
  'tally-compute',
  'tally-float',
  'tally-roofline',
  'tally-inference',
  'tally-collectives',
];

/**
 * Checks every engine placeholder in a chapter: <tally-value> needs a method and JSON args that parse,
 * so a typo fails the build instead of showing a dash on the page.
 */
function checkPlaceholders(html, file) {
  const values = [...html.matchAll(/<tally-value\b([^>]*)>/g)];
  for (const [, attrs] of values) {
    const method = /\bmethod="([^"]*)"/.exec(attrs)?.[1];
    const args = /\bargs='([^']*)'/.exec(attrs)?.[1] ?? '{}';
    const field = /\bfield="([^"]*)"/.exec(attrs)?.[1];
    if (!method || !field) fail(`${file}: <tally-value${attrs}> needs method and field attributes`);
    try {
      JSON.parse(args.replace(/&quot;/g, '"'));
    } catch (error) {
      fail(`${file}: <tally-value method="${method}"> has args that are not JSON: ${error.message}`);
    }
  }
  return values.length;
}

/** A widget placeholder standing alone in a paragraph, followed by its caption, becomes a <figure>. */
function wrapFigures(html) {
  const tags = WIDGET_TAGS.join('|');
  const widget = new RegExp(
    `<p>\\s*(<(${tags})\\b[^>]*>\\s*</\\2>)\\s*</p>\\s*(?:<p class="caption">([\\s\\S]*?)</p>)?`,
    'g',
  );
  return html.replace(
    widget,
    (_, element, tag, caption) =>
      `<figure class="widget-figure" data-widget="${tag}">\n${element}\n${caption ? `<figcaption>${caption.trim()}</figcaption>\n` : ''}</figure>`,
  );
}

const unescapeAttr = (text) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** `withRunsFile` (runs-file.mjs) with a failing build naming the chapter file. */
function withRunsFileOf(args, file) {
  try {
    return withRunsFile(args, root);
  } catch (error) {
    return fail(`${file}: ${error.message}`);
  }
}

/** Writes the engine's number into every <tally-value> (data-state="ok"); a failing call fails the build. */
function prerenderValues(html, file) {
  const results = new Map();
  return html.replace(/<tally-value\b([^>]*)><\/tally-value>/g, (element, attrs) => {
    const method = /\bmethod="([^"]*)"/.exec(attrs)[1];
    const argsText = unescapeAttr(/\bargs='([^']*)'/.exec(attrs)?.[1] ?? '{}');
    const field = unescapeAttr(/\bfield="([^"]*)"/.exec(attrs)[1]);
    const format = /\bformat="([^"]*)"/.exec(attrs)?.[1];
    const key = `${method}\u0000${argsText}`;
    if (!results.has(key)) {
      try {
        results.set(key, engine.call(method, withRunsFileOf(JSON.parse(argsText), file)));
      } catch (error) {
        fail(`${file}: ${method} ${argsText}: ${error.message}`);
      }
    }
    let text;
    try {
      text = valueText(method, results.get(key), field, format);
    } catch (error) {
      fail(`${file}: ${error.message}`);
    }
    const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    return `<tally-value${attrs} data-state="ok">${escaped}</tally-value>`;
  });
}

/** <tally-figure name="..."> placeholders become inline SVG figures drawn by web/figures/index.js. */
function insertFigures(html, file) {
  const placeholder =
    /(?:<p>\s*)?<tally-figure\b([^>]*)><\/tally-figure>(?:\s*<\/p>)?\s*(?:<p class="caption">([\s\S]*?)<\/p>)?/g;
  return html.replace(placeholder, (_, attrs, caption) => {
    const name = /\bname="([^"]*)"/.exec(attrs)?.[1];
    const options = withRunsFileOf(JSON.parse(unescapeAttr(/\boptions='([^']*)'/.exec(attrs)?.[1] ?? '{}')), file);
    let drawing;
    try {
      drawing = renderFigure(name, engine, options);
    } catch (error) {
      fail(`${file}: figure "${name}": ${error.message}`);
    }
    if (!caption) fail(`${file}: figure "${name}" needs a <p class="caption"> after it`);
    return `<figure class="diagram" id="fig-${name}">\n${drawing}\n<figcaption>${caption.trim()}</figcaption>\n</figure>`;
  });
}

// Citations: each reference's `cite` strings link to the paper wherever they occur in prose text (not in
// tags, links, code or math).
const references = JSON.parse(readFileSync(path.join(root, 'content/references.json'), 'utf8')).references;
const citeTargets = references
  .flatMap((ref) => ref.cite.map((text) => ({ text, ref })))
  .sort((a, b) => b.text.length - a.text.length);
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const citePattern = new RegExp(citeTargets.map((t) => escapeRegExp(t.text).replace(/ /g, '(?:\\s+| )')).join('|'), 'g');
const citedIds = new Set();
function linkCitations(html) {
  let skipDepth = 0; // inside <a>, <code>, <pre> or KaTeX markup nothing is linked
  return html
    .split(/(<[^>]+>)/)
    .map((part) => {
      if (part.startsWith('<')) {
        const tag = /^<\/?([a-z0-9-]+)/i.exec(part)?.[1]?.toLowerCase();
        if (['a', 'code', 'pre', 'math', 'svg', 'tally-value'].includes(tag) && !part.endsWith('/>'))
          skipDepth += part.startsWith('</') ? -1 : 1;
        return part;
      }
      if (skipDepth > 0) return part;
      return part.replace(citePattern, (match) => {
        const normal = match.replace(/\s+/g, ' ');
        const target = citeTargets.find((t) => t.text === normal);
        if (!target) return match;
        citedIds.add(target.ref.id);
        return `<a class="cite" href="${target.ref.url}" data-ref="${target.ref.id}">${match}</a><a class="ref-mark" href="#ref-${target.ref.id}" aria-label="reference ${references.indexOf(target.ref) + 1}">[${references.indexOf(target.ref) + 1}]</a>`;
      });
    })
    .join('');
}

const chaptersDir = path.join(root, 'content/chapters');
const chapterFiles = readdirSync(chaptersDir)
  .filter((f) => f.endsWith('.md'))
  .sort();
const chapters = [];
let placeholderCount = 0;
for (const file of chapterFiles) {
  const { meta, body } = frontMatter(readFileSync(path.join(chaptersDir, file), 'utf8'), file);
  const id = meta.id ?? path.basename(file, '.md').replace(/^\d+-/, '');
  let html;
  try {
    html = finishMathml(md.render(body));
  } catch (error) {
    fail(`${file}: ${error.message}`);
  }
  html = wrapFigures(html);
  placeholderCount += checkPlaceholders(html, file);
  html = linkCitations(insertFigures(prerenderValues(html, file), file));
  // A block element: out of any <p> markdown put it in, or the parser would move the table out of it.
  html = html.replace(
    /(?:<p>\s*)?<tally-recipes><\/tally-recipes>(?:\s*<\/p>)?/g,
    () => `<tally-recipes data-state="ok">${recipesTableHtml(engine)}</tally-recipes>`,
  );
  // A table scrolls sideways on a phone (web/style.css): focusable, so a keyboard can scroll it (WCAG 2.1.1).
  html = html.replace(/<table\b(?![^>]*\btabindex=)/g, '<table tabindex="0"');
  const headings = [...html.matchAll(/<h1>([\s\S]*?)<\/h1>/g)];
  const title = meta.title ?? headings[0]?.[1] ?? id;
  // The contents list numbers a chapter as its heading does ("8b. Where the step time goes"), not by position.
  const number = /^\s*(\d+[a-z]?)\./.exec(headings[0]?.[1] ?? '')?.[1] ?? null;
  chapters.push({ id, title, number, html: html.replace(/<h1>/, `<h1 id="${id}-title">`) });
}

// The reference list, generated from content/references.json in its order.
const referenceItems = references
  .map(
    (ref, i) =>
      `<li id="ref-${ref.id}" value="${i + 1}">${ref.authors} (${ref.year}). <a href="${ref.url}">${ref.title}</a>. ${ref.venue}.</li>`,
  )
  .join('\n');
chapters.push({
  id: 'references',
  title: 'References',
  html: `<h1 id="references-title">References</h1>\n<ol class="references">\n${referenceItems}\n</ol>\n`,
});

const toc = chapters
  .map((c) => `<li><a href="#${c.id}">${c.number ? `${c.number}. ${c.title}` : c.title}</a></li>`)
  .join('\n');
// The lede's chapter count, in words, from the numbered headings (8 and 8b are two chapters).
const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
];
const numbered = chapters.filter((c) => c.number).length;
const chapterCount = NUMBER_WORDS[numbered] ?? String(numbered);
const content = chapters
  .map(
    (c) =>
      `<section class="chapter" id="${c.id}" aria-labelledby="${c.id === 'errata' ? 'errata-title' : `${c.id}-title`}">\n${c.html}</section>`,
  )
  .join('\n');

// Each chapter's recorded height (scripts/upkeep/measure-chapter-heights.mjs) is its placeholder size while it is
// off-screen and not laid out (web/style.css, content-visibility); appended to the built style.css (no inline styles
// under the page's CSP). A chapter without a recorded height gets the stylesheet's default.
const heightsFile = path.join(root, 'content/chapter-heights.json');
if (existsSync(heightsFile)) {
  const { heights } = JSON.parse(readFileSync(heightsFile, 'utf8'));
  const rules = chapters
    .filter((c) => heights[c.id]?.wide > 0 && heights[c.id]?.narrow > 0 && heights[c.id]?.smallest > 0)
    .map(
      (c) =>
        `#${c.id} { --chapter-wide: ${heights[c.id].wide}px; --chapter-narrow: ${heights[c.id].narrow}px; --chapter-smallest: ${heights[c.id].smallest}px; }`,
    );
  writeFileSync(
    path.join(outDir, 'style.css'),
    `${readFileSync(path.join(outDir, 'style.css'), 'utf8')}\n/* Recorded chapter heights (content/chapter-heights.json, written by scripts/upkeep/measure-chapter-heights.mjs). */\n${rules.join('\n')}\n`,
  );
}

const template = readFileSync(path.join(root, 'web/index.html'), 'utf8');
if (!template.includes('{{content}}')) fail('web/index.html has no {{content}} slot');
// Every module the page's scripts import, found by following their static imports, is preloaded by app.js once the
// first frame has painted, so the browser fetches them in parallel instead of discovering them one import level at
// a time (widgets -> base.js -> kit/share.js, curves.js -> figures/index.js -> each figure). Not in the head: on a slow phone
// link the preloads (every widget's code) shared the bandwidth with the first paint and delayed it by seconds
// (Lighthouse, BENCHMARKS.md). The list travels in a <meta> tag (the CSP allows no inline script).
const preload = `<meta name="tally-module-graph" content="${[
  'tally-widgets.js',
  ...moduleGraph([
    ...[...template.matchAll(/<script type="module" src="([^"]+)"/g)].map((m) => m[1]),
    'tally-widgets.js',
  ]),
]
  .filter((f) => f !== 'engine.js') // the template preloads it first
  .join(' ')}">`;
// The page's Content-Security-Policy (scripts/build/csp.mjs), also sent as a header by scripts/dev/static-server.mjs.
if (!template.includes('<meta charset="utf-8">'))
  fail('web/index.html has no <meta charset="utf-8"> to put the CSP after');
const cspMeta = `<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP.replace(/"/g, '&quot;')}">`;
const pageHtml = template
  .replace('<meta charset="utf-8">', cspMeta)
  .replace('{{preload}}', preload)
  .replace('{{toc}}', toc)
  .replace('{{chapter_count}}', chapterCount)
  .replace('{{content}}', content);
writeFileSync(path.join(outDir, 'index.html'), pageHtml);
// embed.html carries the same policy as a <meta> tag, so a frame served by a host that sends no CSP header is
// as locked down as on tally's own server (the npm package ships this copy).
const embedTemplate = readFileSync(path.join(root, 'web/embed.html'), 'utf8');
if (!embedTemplate.includes('<meta charset="utf-8">'))
  fail('web/embed.html has no <meta charset="utf-8"> to put the CSP after');
// The modules every embeddable widget imports (base.js and what it imports, kit/chart.js) are preloaded by the frame, so
// they download beside embed.js and the widget's own module instead of one import level at a time.
const embedScript = '<script type="module" src="embed.js"></script>';
if (!embedTemplate.includes(embedScript)) fail(`web/embed.html has no ${embedScript}`);
const embedShared = [...embedModules.values()]
  .map((file) => new Set(moduleGraph([`widgets/${file}`])))
  .reduce((common, graph) => new Set([...common].filter((f) => graph.has(f))));
writeFileSync(
  path.join(outDir, 'embed.html'),
  embedTemplate
    .replace('<meta charset="utf-8">', cspMeta)
    .replace(
      embedScript,
      `${[...embedShared].map((f) => `<link rel="modulepreload" href="${f}">`).join('\n')}\n${embedScript}`,
    ),
);
// KaTeX's stylesheet with only the rules the page's classes can match (scripts/build/prune-css.mjs).
if (!template.includes('href="vendor/katex/katex.page.css"'))
  fail('web/index.html does not link vendor/katex/katex.page.css');
const katexCss = readFileSync(path.join(katexDir, 'katex.min.css'), 'utf8');
const prunedKatexCss = pruneCss(katexCss, classesIn(pageHtml), readFileSync(path.join(outDir, 'style.css'), 'utf8'));
writeFileSync(
  path.join(vendor, 'katex.page.css'),
  `/* KaTeX ${katex.version} stylesheet (MIT licence), pruned to this page's classes by scripts/build/prune-css.mjs */\n${prunedKatexCss}\n`,
);

/** The site-relative paths of every module reachable by static `import ... from './x.js'` from the entries. */
function moduleGraph(entries) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(path.join(outDir, file), 'utf8');
    for (const m of text.matchAll(
      /^\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'|^\s*import\s+'(\.{1,2}\/[^']+)'/gm,
    ))
      visit(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2])));
  };
  entries.forEach(visit);
  return [...seen].filter((f) => !entries.includes(f));
}

// ---------------------------------------------------------------------------------------------------
// Minify every script the site serves (esbuild, each file on its own: imports, exports and file names stay as they
// are, so the page, embed.html and the package load the same modules). No source maps ship: web/ is the source.
// ---------------------------------------------------------------------------------------------------

for (const file of walk(outDir).filter((f) => f.endsWith('.js'))) {
  const { code } = await transform(readFileSync(file, 'utf8'), {
    loader: 'js',
    minify: true,
    charset: 'utf8',
    legalComments: 'none',
  });
  writeFileSync(file, code);
}

// ---------------------------------------------------------------------------------------------------
// Report the payload a reader downloads before the page is interactive (wasm + JS, gzip -9).
// ---------------------------------------------------------------------------------------------------

function walk(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
const startup = walk(outDir).filter(
  (f) => /\.(js|wasm)$/.test(f) && !f.includes(`${path.sep}vendor${path.sep}`) && !f.includes('embed-example'),
);
const raw = startup.reduce((sum, f) => sum + statSync(f).size, 0);
const gz = startup.reduce((sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length, 0);
console.log(
  `build-site: ${chapters.length} chapters, ${placeholderCount} engine values, ${widgetFiles.length} widgets -> ` +
    `${path.relative(root, outDir)} (wasm+JS ${(raw / 1024).toFixed(0)} KiB, ${(gz / 1024).toFixed(0)} KiB gzip)`,
);
