// The hosts course authors build with (docs/EMBEDDING.md, "Recipes per host"): each recipe is read out of
// EMBEDDING.md (the files between its `<!-- recipe HOST FILE -->` markers), written into a fresh project that
// installs the packed tarball, built with the host's own CLI (vite build, vitepress build, astro build), served
// on 127.0.0.1 and checked in Chromium: every widget shows the native CLI's numbers. The classic script is
// served without CORS headers from another port and opened from file://; the LMS iframe sits in a page whose
// CSP forbids scripts. The hosts' tools are the repository's devDependencies (pinned by package-lock.json),
// linked into each project: installing them from the registry on every run took 85 s and needed the network.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { startSite, root, siteDir, screenshot, DESKTOP } from './harness.mjs';
import { assertComputes } from './kit-helpers.mjs';
import { native } from './page-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';
import { documentedPackage } from '../../scripts/upkeep/embed-sizes.mjs';

const PLACEHOLDER = 'https://your.host/tally/';
const doc = readFileSync(path.join(root, 'docs/EMBEDDING.md'), 'utf8');

/** {file: text} of the recipe for `host` in EMBEDDING.md: each marker comment, then its fenced block. */
function recipe(host, base = PLACEHOLDER) {
  const files = {};
  for (const m of doc.matchAll(/<!-- recipe (\S+) (\S+) -->\n```[^\n]*\n([\s\S]*?)\n```\n/g))
    if (m[1] === host) files[m[2]] = `${m[3].replaceAll(PLACEHOLDER, base)}\n`;
  assert.ok(Object.keys(files).length, `docs/EMBEDDING.md has a recipe for ${host}`);
  return files;
}

let work;
let tarball;
let report;
/** The four bundled projects, built at once (each test awaits its own): {name: Promise<project dir>}. */
const builds = {};
let site;
before(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'tally-hosts-'));
  execFileSync(
    process.execPath,
    [path.join(root, 'scripts/build/pack-widgets.mjs'), '--site', siteDir, '--out', path.join(work, 'pack')],
    { stdio: 'pipe' },
  );
  report = JSON.parse(readFileSync(path.join(work, 'pack/pack.json'), 'utf8'));
  tarball = path.join(work, 'pack', report.filename);
  startBuilds();
  site = await startSite();
});
after(async () => {
  await site?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A fresh project with the tarball installed, the given host tools linked in and the recipe's files written. */
function project(name, files, tools, pkg = { type: 'module' }) {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, ...pkg }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: dir,
    stdio: 'pipe',
  });
  // After npm install, which would prune links it did not make.
  for (const tool of tools) {
    mkdirSync(path.dirname(path.join(dir, 'node_modules', tool)), { recursive: true }); // a scope's folder
    symlinkSync(path.join(root, 'node_modules', tool), path.join(dir, 'node_modules', tool));
  }
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Runs a tool's own CLI (its package.json `bin`, `name` when it has several) in `dir`; rejects with its output. */
async function cli(dir, tool, args, name = tool) {
  const pkg = JSON.parse(readFileSync(path.join(root, 'node_modules', tool, 'package.json'), 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin[name];
  try {
    await promisify(execFile)(process.execPath, [path.join(root, 'node_modules', tool, bin), ...args], {
      cwd: dir,
      env: {
        ...process.env,
        ASTRO_TELEMETRY_DISABLED: '1',
        NEXT_TELEMETRY_DISABLED: '1',
        DOCUSAURUS_TELEMETRY_DISABLED: '1',
        NO_COLOR: '1',
      },
      maxBuffer: 64 * 2 ** 20,
    });
  } catch (error) {
    throw new Error(`${tool} ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`);
  }
  return dir;
}

function startBuilds() {
  const start = (name, host, tools, tool, args, bin, { files = {}, pkg } = {}) => {
    builds[name] = cli(project(`${name}-course`, { ...recipe(host), ...files }, tools, pkg), tool, args, bin);
    builds[name].catch(() => {}); // reported by the test that awaits it
  };
  start('vite', 'vite', ['vite'], 'vite', ['build', '--logLevel', 'error']);
  start('vitepress', 'vitepress', ['vitepress', 'vue'], 'vitepress', ['build', 'docs']);
  start('astro', 'astro', ['astro'], 'astro', ['build', '--silent']);
  start('reveal', 'reveal', ['vite', 'reveal.js'], 'vite', ['build', '--logLevel', 'error']);
  // The recipe's config, with two settings of the test's own: Turbopack compiles nothing outside its root, and the
  // linked tools live in this repository's node_modules, outside the project; and no build cache is written (a
  // fresh project every run: writing it took 12 s).
  start('next', 'next', ['next', 'react', 'react-dom'], 'next', ['build'], 'next', {
    files: {
      'next.config.mjs': `${recipe('next')['next.config.mjs'].replace('export default {', 'const config = {')}
export default { ...config, turbopack: { root: '/' }, experimental: { turbopackFileSystemCacheForBuild: false } };
`,
    },
  });
  start(
    'docusaurus',
    'docusaurus',
    ['@docusaurus/core', '@docusaurus/preset-classic', 'react', 'react-dom', '@mdx-js/react'],
    '@docusaurus/core',
    ['build', '--no-minify'],
    'docusaurus',
    // As `npx create-docusaurus` makes it: a CommonJS package (its generated client code uses require.resolveWeak).
    { pkg: {} },
  );
}

/** The Hugo site's own settings (not the recipe's): a site with only a home page. */
const HUGO_CONFIG = `baseURL = '/'
disableKinds = ['taxonomy', 'term', 'RSS', 'sitemap', '404']
`;

/** A page of the shared browser that records errors; the browser's own favicon request is answered. */
async function newPage(viewport = DESKTOP) {
  const page = await site.newPage(viewport);
  await page.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
  return page;
}

/** Serves `dir` (no CSP: the host's page brings its own), opens `pathname`, checks every widget on it. */
async function checkServed(t, dir, name, tags, pathname = '/') {
  const server = await startServer(dir, 0, { csp: null });
  t.after(() => server.close());
  const page = await newPage();
  const wasm = [];
  page.on('request', (r) => r.url().endsWith('.wasm') && wasm.push(r.url()));
  await page.goto(new URL(pathname, server.url).href);
  for (const tag of tags) await assertComputes(page.locator(tag).first(), `${name} ${tag}`);
  assert.equal(wasm.length, 1, `${name}: the bundle fetches the emitted tally.wasm once (${wasm})`);
  // Named by the bundler: tally.<hash>.wasm (Vite, Turbopack) or <hash>.wasm (Docusaurus's webpack).
  assert.equal(new URL(wasm[0]).origin, new URL(server.url).origin, `${name}: from the bundle's own assets`);
  assert.ok(
    !wasm[0].startsWith(site.url) && !/\/node_modules\//.test(wasm[0]),
    `${name}: the emitted file (${wasm[0]})`,
  );
  // Share / embed from a bundle: the element for the same state, and no "Invalid URL".
  const first = page.locator(tags[0]).first();
  await first.evaluate((el) => el.shadowRoot.querySelector('details.share summary').click());
  const snippet = await first.evaluate((el) => el.shadowRoot.querySelector('[data-kind="script"] textarea').value);
  assert.match(snippet, new RegExp(`^<${tags[0]} [^>]*model="llama-3-[78]0?b"`), `${name}: Share gives the element`);
  // The roofline's measuring worker starts from the bundle and finds the renamed engine files.
  const formats = await page.evaluate(async () => {
    const roofline = document.createElement('tally-roofline');
    document.body.append(roofline);
    await roofline.ready;
    const [worker] = await roofline.bench.startWorkers(1);
    const answer = await worker.call('float_formats', {});
    worker.worker.terminate();
    roofline.remove();
    return answer;
  });
  assert.deepEqual(formats, native('float_formats', {}), `${name}: the worker's engine answers as the CLI`);
  await screenshot(page, `host-${name}`, { fullPage: true });
  assert.deepEqual(page.errors, [], `${name}: no console errors`);
  return page;
}

test("Vite: the recipe builds with vite build and its widgets compute the engine's numbers", async (t) => {
  const dir = await builds.vite;
  await checkServed(t, path.join(dir, 'dist'), 'vite', ['tally-memory-budget', 'tally-compute']);
});

test('VitePress: the theme imports the package (server-side rendering included) and the page computes', async (t) => {
  const dir = await builds.vitepress;
  const built = readFileSync(path.join(dir, 'docs/.vitepress/dist/index.html'), 'utf8');
  assert.match(built, /<tally-memory-budget model="llama-3-8b"/, 'the pre-rendered page keeps the element');
  const page = await checkServed(t, path.join(dir, 'docs/.vitepress/dist'), 'vitepress', [
    'tally-memory-budget',
    'tally-compute',
  ]);
  // VitePress's appearance switch (class="dark" on <html>) re-themes the widgets.
  await page.locator('button.VPSwitchAppearance').first().click();
  await page.waitForFunction(() => document.documentElement.classList.contains('dark'));
  await page.waitForFunction(() => document.querySelector('tally-compute').dataset.tallyTheme === 'dark');
  await screenshot(page, 'host-vitepress-dark');
});

test("Astro: the page's script is bundled by astro build and its widgets compute the engine's numbers", async (t) => {
  const dir = await builds.astro;
  await checkServed(t, path.join(dir, 'dist'), 'astro', ['tally-memory-budget', 'tally-step']);
});

test('Next.js: a client component imports the package, next build pre-renders it on the server and the page computes', async (t) => {
  const dir = await builds.next;
  const built = readFileSync(path.join(dir, 'out/index.html'), 'utf8');
  assert.match(
    built,
    /<tally-memory-budget model="llama-3-8b"/,
    'the server rendered the element (the import did not crash)',
  );
  await checkServed(t, path.join(dir, 'out'), 'next', ['tally-memory-budget', 'tally-compute']);
});

test('Docusaurus: an MDX page imports the package, the webpack build pre-renders it and the page computes', async (t) => {
  const dir = await builds.docusaurus;
  const built = readFileSync(path.join(dir, 'build/index.html'), 'utf8');
  // Docusaurus minifies the HTML: attribute values lose their quotes.
  assert.match(built, /<tally-memory-budget model="?llama-3-8b/, 'the pre-rendered page keeps the element');
  const page = await checkServed(t, path.join(dir, 'build'), 'docusaurus', ['tally-memory-budget', 'tally-compute']);
  // Docusaurus's colour-mode switch (data-theme on <html>) re-themes the widgets.
  await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));
  await page.waitForFunction(() => document.querySelector('tally-compute').dataset.tallyTheme === 'dark');
});

test("Hugo: the shortcode passes the elements through Hugo's Markdown renderer and the page computes", async (t) => {
  // Hugo takes well under a second: built here, once tally's site (where the shortcode's script comes from) runs.
  const dir = path.join(work, 'hugo-course');
  for (const [file, text] of Object.entries({ ...recipe('hugo', site.url), 'hugo.toml': HUGO_CONFIG })) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  try {
    await promisify(execFile)('hugo', ['--quiet'], { cwd: dir });
  } catch (error) {
    throw new Error(`hugo failed:\n${error.stdout}\n${error.stderr}`);
  }
  const built = readFileSync(path.join(dir, 'public/index.html'), 'utf8');
  assert.doesNotMatch(built, /raw HTML omitted/, 'Goldmark kept the elements');
  assert.equal(built.match(/tally-widgets\.js/g)?.length, 1, 'the script tag once per page');
  const page = await newPage();
  const server = await startServer(path.join(dir, 'public'), 0, { csp: null });
  t.after(() => server.close());
  await page.goto(server.url);
  for (const tag of ['tally-memory-budget', 'tally-compute']) await assertComputes(page.locator(tag), `hugo ${tag}`);
  assert.deepEqual(page.errors, []);
});

test('reveal.js: a compact widget fits the 960x700 slide and keys typed into it do not drive the deck', async (t) => {
  const dir = await builds.reveal;
  const server = await startServer(path.join(dir, 'dist'), 0, { csp: null });
  t.after(() => server.close());
  const page = await newPage();
  await page.goto(server.url);
  const widget = page.locator('tally-memory-budget');
  await assertComputes(widget, 'reveal tally-memory-budget');
  await page.waitForFunction(() => document.querySelector('.reveal.ready'));
  const boxes = await page.evaluate(() => {
    const rect = (el) => el.getBoundingClientRect().toJSON();
    return {
      slides: rect(document.querySelector('.reveal .slides')),
      widget: rect(document.querySelector('tally-memory-budget')),
    };
  });
  for (const [edge, inside] of [
    ['top', boxes.widget.top >= boxes.slides.top - 1],
    ['left', boxes.widget.left >= boxes.slides.left - 1],
    ['right', boxes.widget.right <= boxes.slides.right + 1],
    ['bottom', boxes.widget.bottom <= boxes.slides.bottom + 1],
  ])
    assert.ok(inside, `the widget's ${edge} edge is inside the slide: ${JSON.stringify(boxes)}`);
  await screenshot(page, 'host-reveal');
  const gpus = widget.locator('input[name="gpus"]');
  await gpus.focus();
  for (const key of ['ArrowRight', 'Space', 'ArrowDown', '.', 'b', 'n']) await gpus.press(key);
  const deck = await page.evaluate(() => ({
    hash: location.hash,
    first: document.querySelector('.reveal .slides > section').classList.contains('present'),
    paused: document.querySelector('.reveal').classList.contains('paused'),
  }));
  assert.deepEqual(deck, { hash: deck.hash, first: true, paused: false }, 'still on the first slide, not paused');
  assert.ok(!/#\/1/.test(deck.hash), `the deck did not move on (${deck.hash})`);
  await screenshot(page, 'host-reveal-typed');
  // Outside the widget the deck's keys still work.
  await page.locator('.reveal h2').first().click();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => /#\/1/.test(location.hash));
  assert.deepEqual(page.errors, []);
});

/** A server for one folder that sends no Access-Control-Allow-Origin (nor any other CORS header). */
function plainServer(dir) {
  const server = http.createServer((request, response) => {
    const file = path.join(dir, path.basename(new URL(request.url, 'http://x').pathname));
    try {
      const body = readFileSync(file);
      response.writeHead(200, { 'Content-Type': file.endsWith('.js') ? 'text/javascript' : 'text/html' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) }),
    ),
  );
}

test('classic script: from a host that sends no CORS headers, and from a file:// page, the widgets compute', async (t) => {
  const scripts = path.join(work, 'classic-host');
  mkdirSync(scripts, { recursive: true });
  const installed = project('classic-course', {}, []);
  writeFileSync(
    path.join(scripts, 'tally-widgets.classic.js'),
    readFileSync(path.join(installed, 'node_modules/tally-widgets/tally-widgets.classic.js')),
  );
  const cdn = await plainServer(scripts);
  t.after(() => cdn.close());
  const tags = ['tally-compute', 'tally-float'];
  // A notebook page has an AMD loader (Jupyter's RequireJS); its define() must not be called anonymously.
  const pageHtml = (base) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>notebook</title>
<script>window.amdCalls = 0; window.define = () => window.amdCalls++; window.define.amd = {};</script></head>
<body><h1>Notebook output</h1>\n${recipe('notebook', base)['tally.html']}</body></html>`;

  // The notebook's HTML output on one origin, the script on another that sends no CORS header.
  const pages = path.join(work, 'classic-pages');
  mkdirSync(pages, { recursive: true });
  writeFileSync(path.join(pages, 'index.html'), pageHtml(cdn.url));
  const host = await startServer(pages, 0, { csp: null });
  t.after(() => host.close());
  assert.notEqual(new URL(host.url).port, new URL(cdn.url).port, 'two origins');
  const page = await newPage();
  const headers = [];
  page.on('response', (r) => r.url().startsWith(cdn.url) && headers.push(r.headers()));
  await page.goto(host.url);
  for (const tag of tags) await assertComputes(page.locator(tag), `classic over http ${tag}`);
  assert.equal(headers.length, 1, 'one download: the script (the wasm is inside it)');
  assert.equal(headers[0]['access-control-allow-origin'], undefined, 'the script host sent no CORS header');
  assert.equal(await page.evaluate(() => window.amdCalls), 0, "the page's AMD define() was left alone");
  // Share gives the classic script's tag and the element.
  const compute = page.locator('tally-compute');
  await compute.evaluate((el) => el.shadowRoot.querySelector('details.share summary').click());
  const snippet = await compute.evaluate((el) => el.shadowRoot.querySelector('[data-kind="script"] textarea').value);
  assert.match(snippet, new RegExp(`^<script src="${cdn.url}tally-widgets.classic.js"></script>\n<tally-compute `));
  await screenshot(page, 'host-classic-http', { fullPage: true });
  assert.deepEqual(page.errors, []);

  // The same output saved beside the script and opened from disk.
  writeFileSync(path.join(scripts, 'notebook.html'), pageHtml(`${pathToFileURL(scripts).href}/`));
  const local = await newPage();
  const requests = [];
  local.on('request', (r) => requests.push(r.url()));
  await local.goto(pathToFileURL(path.join(scripts, 'notebook.html')).href);
  for (const tag of tags) await assertComputes(local.locator(tag), `classic from file:// ${tag}`);
  assert.deepEqual(
    requests.map((u) => path.basename(new URL(u).pathname)),
    ['notebook.html', 'tally-widgets.classic.js'],
    'nothing else is fetched',
  );
  await screenshot(local, 'host-classic-file', { fullPage: true });
  assert.deepEqual(local.errors, []);
});

test('learning platform: the iframe recipe in a page whose CSP forbids scripts shows the inference widget', async (t) => {
  const dir = path.join(work, 'lms');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Week 3</title></head><body><h1>Week 3</h1>\n${recipe('lms', site.url)['page.html']}</body></html>`,
  );
  const lms = await startServer(dir, 0, { csp: "script-src 'none'" });
  t.after(() => lms.close());
  const page = await newPage();
  await page.goto(lms.url);
  const shown = await assertComputes(page.frameLocator('iframe').locator('tally-inference'), 'lms tally-inference');
  assert.deepEqual([shown.args.batch, shown.args.context], [32, 8192], "the snippet's attributes reach the widget");
  await screenshot(page, 'host-lms', { fullPage: true });
  assert.deepEqual(page.errors, []);
});

test("EMBEDDING.md's sizes table: the package's rows match a fresh pack (5 % and the same file count)", () => {
  const documented = documentedPackage();
  const refresh = 'refresh the table: node scripts/upkeep/embed-sizes.mjs --write';
  assert.equal(documented.files, report.entryCount, `files in the package (${refresh})`);
  for (const [row, measured] of [
    ['packed', report.size],
    ['unpacked', report.unpackedSize],
  ])
    assert.ok(
      Math.abs(documented[row] - measured) <= 0.05 * measured,
      `${row}: documented ${documented[row]} bytes, measured ${measured} (${refresh})`,
    );
});
