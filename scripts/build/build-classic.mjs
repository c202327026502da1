// One classic (non-module) script with every widget and the engine inside it, for hosts a module script cannot
// use: a server that sends no Access-Control-Allow-Origin (module scripts and fetch() across origins need it, a
// classic <script src> does not), a learning platform's file area, a page opened from file://.
// usage: node scripts/build/build-classic.mjs [--site build/site] [--out build/classic/tally-widgets.classic.js]
//
// The widget modules are bundled by esbuild as one IIFE; tally.js (Emscripten's glue, itself a classic script)
// goes first and tally.wasm is inlined as base64, handed to the loader as `wasmBinary`, so the script fetches
// nothing. `import.meta.url` becomes the script's own address (document.currentScript), which Share's snippets
// use. scripts/build/pack-widgets.mjs ships the same file in the npm package as tally-widgets.classic.js.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { globalEngineModule } from './engine-module.mjs';

export const CLASSIC_FILE = 'tally-widgets.classic.js';

/** The classic script's text, built from a site folder (scripts/build/build-site.mjs output). */
export async function buildClassic(siteDir) {
  const bundle = await esbuild.build({
    stdin: { contents: "import './tally-widgets.js';", resolveDir: siteDir, sourcefile: 'classic-entry.js' },
    bundle: true,
    plugins: [globalEngineModule],
    format: 'iife',
    minify: true,
    write: false,
    target: 'es2022',
    define: { 'import.meta.url': 'globalThis.tallyClassicScript' },
    logLevel: 'error',
  });
  const wasm = readFileSync(path.join(siteDir, 'tally.wasm'));
  return `/* tally's widgets and engine in one classic script: <script src="${CLASSIC_FILE}"></script> */
globalThis.tallyClassicScript = (document.currentScript && document.currentScript.src) || location.href;
// Emscripten's glue, with no module system in sight: on a page with an AMD loader (Jupyter's RequireJS) its
// anonymous define() would be an error. The wasm bytes are inlined, so the loader fetches nothing.
globalThis.createTallyModule = ((define, exports, module) => {
${readFileSync(path.join(siteDir, 'tally.js'), 'utf8')}
  const text = atob(${JSON.stringify(wasm.toString('base64'))});
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return (options = {}) => createTallyModule({ ...options, wasmBinary: bytes });
})();
${bundle.outputFiles[0].text}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const argv = process.argv.slice(2);
  const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
  const siteDir = path.resolve(root, option('--site', 'build/site'));
  const outFile = path.resolve(root, option('--out', `build/classic/${CLASSIC_FILE}`));
  let text;
  try {
    text = await buildClassic(siteDir);
  } catch (error) {
    console.error(`build-classic: ${error.message} (build the site first: scripts/build/build-site.mjs)`);
    process.exit(1);
  }
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, text);
  console.log(
    `build-classic: ${path.relative(root, outFile)} ${text.length} bytes (${gzipSync(text, { level: 9 }).length} gzip)`,
  );
}
