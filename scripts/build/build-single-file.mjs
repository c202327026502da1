// One HTML file of the whole explainer, for courses that hand out files: build/single/tally.html works opened
// from file:// with no server and no network. usage: node scripts/build/build-single-file.mjs [--site build/site] [--out FILE]
//
// Everything the page loads is inlined: the page's modules bundled by esbuild into one inline module, style.css, KaTeX's stylesheet with its woff2
// fonts as data: URLs, tally.js as a classic script and tally.wasm as base64 handed to Emscripten's loader as
// `wasmBinary` (a file:// page cannot fetch it). The page's CSP is replaced by one that allows exactly these
// inline scripts (by hash) and no network at all. The roofline's "Measure my machine" needs Web Workers, which a
// file:// page cannot start; the widget says so (web/widgets/roofline.js).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { globalEngineModule } from './engine-module.mjs';
import { failer, pathOption, root } from './options.mjs';

const siteDir = pathOption('--site', 'build/site');
const outFile = pathOption('--out', 'build/single/tally.html');
const katexDir = path.join(root, 'node_modules/katex/dist');
const fail = failer('build-single-file');
for (const file of ['index.html', 'tally.js', 'tally.wasm', 'tally-widgets.js', 'style.css'])
  if (!existsSync(path.join(siteDir, file)))
    fail(`${path.join(siteDir, file)} is missing: run scripts/build/build-site.mjs first`);

const read = (file) => readFileSync(path.join(siteDir, file), 'utf8');
/** Text safe inside an inline <script>: "</script" and "<!--" cannot end or confuse the element (same JS meaning). */
const scriptText = (js) => js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

// ------------------------------------------------------------------------------ the page's modules, bundled
const entries = ['tally-widgets.js', 'app.js', 'fit-math.js'];
const bundle = await esbuild.build({
  stdin: {
    contents: entries.map((f) => `import './${f}';`).join('\n'),
    resolveDir: siteDir,
    sourcefile: 'single-file-entry.js',
  },
  bundle: true,
  plugins: [globalEngineModule],
  format: 'esm',
  minify: true,
  write: false,
  target: 'es2022',
  logLevel: 'error',
});
const modules = scriptText(bundle.outputFiles[0].text);

// ------------------------------------------------------------------------------ the engine
const wasm = readFileSync(path.join(siteDir, 'tally.wasm'));
const engine = scriptText(`${read('tally.js')}
// Single-file build: the wasm bytes are inlined, so the loader never fetches tally.wasm.
(() => {
  const text = atob(${JSON.stringify(wasm.toString('base64'))});
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  const create = globalThis.createTallyModule;
  globalThis.createTallyModule = (options = {}) => create({ ...options, wasmBinary: bytes });
})();`);

// ------------------------------------------------------------------------------ styles and fonts
const katexCss = read('vendor/katex/katex.page.css').replace(/src:([^;}]*)/g, (whole, sources) => {
  const woff2 = /url\((fonts\/[^)]+\.woff2)\)/.exec(sources);
  if (!woff2) return whole;
  return `src:url(data:font/woff2;base64,${readFileSync(path.join(katexDir, woff2[1])).toString('base64')}) format("woff2")`;
});
if (/url\(fonts\//.test(katexCss)) fail('a KaTeX font has no woff2 file to inline');

// ------------------------------------------------------------------------------ the page
const CSP = [
  "default-src 'none'",
  `script-src ${sha256(engine)} ${sha256(modules)} 'wasm-unsafe-eval'`,
  "style-src 'unsafe-inline'",
  'font-src data:',
  'img-src data: blob:',
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
let html = read('index.html');
const replaceOnce = (pattern, replacement, what) => {
  if (!pattern.test(html)) fail(`index.html has no ${what}`);
  html = html.replace(pattern, replacement);
};
replaceOnce(
  /<meta http-equiv="Content-Security-Policy" content="[^"]*">/,
  `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
  'CSP meta tag',
);
html = html.replace(/<link rel="(modulepreload|preload)"[^>]*>\n?/g, '');
// The modules app.js would preload after the first paint (build-site's list) are inlined here.
html = html.replace(/<meta name="tally-module-graph"[^>]*>\n?/, '');
replaceOnce(/<link rel="stylesheet" href="style.css">/, () => `<style>${read('style.css')}</style>`, 'style.css link');
replaceOnce(
  /<link rel="stylesheet" href="vendor\/katex\/katex.page.css">/,
  () => `<style>${katexCss}</style>`,
  'KaTeX stylesheet link',
);
html = html.replace(/<script type="module" src="[^"]*"><\/script>\n?/g, '');
// Anything still pointing at a file beside the page would fail from file://.
const leftover = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="(?!data:|#)([^"]+)"/g)].map((m) => m[1]);
if (leftover.length) fail(`still references ${leftover.join(', ')}`);
replaceOnce(
  /<\/head>/,
  () => `<script>${engine}</script>\n<script type="module">${modules}</script>\n</head>`,
  '</head>',
);

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, html);
const size = statSync(outFile).size;
console.log(
  `build-single-file: ${path.relative(root, outFile)} ${(size / 2 ** 20).toFixed(2)} MiB (${size} bytes; ${(gzipSync(html, { level: 9 }).length / 2 ** 20).toFixed(2)} MiB gzip)`,
);
