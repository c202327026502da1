// The npm route (docs/EMBEDDING.md): scripts/build/pack-widgets.mjs packs the widgets; the tarball installs into a fresh
// project with npm (offline: it has no dependencies), its type declarations type-check an author's code (and
// reject a wrong attribute value), and the widgets, imported from node_modules on that project's own server,
// compute the engine's numbers with tally.wasm loaded from beside the package's modules.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSite, screenshot, root, siteDir, DESKTOP } from './harness.mjs';
import { errors } from './page-helpers.mjs';
import { assertComputes } from './kit-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

test("npm package: packed, installed into a fresh project, typed, and its widgets compute the engine's numbers", async (t) => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'tally-pkg-'));
  const project = path.join(work, 'course');
  t.after(() => rmSync(work, { recursive: true, force: true }));
  execFileSync(
    process.execPath,
    [path.join(root, 'scripts/build/pack-widgets.mjs'), '--site', siteDir, '--out', path.join(work, 'pack')],
    { stdio: 'pipe' },
  );
  const report = JSON.parse(readFileSync(path.join(work, 'pack/pack.json'), 'utf8'));
  const listed = report.files.map((f) => f.path);
  for (const file of [
    'package.json',
    'tally-widgets.js',
    'engine.js',
    'tally.js',
    'tally-module.js',
    'tally.wasm',
    'index.d.ts',
    'tally-api.d.ts',
    'custom-elements.json',
    'widgets/memory.js',
  ])
    assert.ok(listed.includes(file), `the tarball holds ${file}`);
  assert.ok(!listed.some((f) => /(^|\/)(app\.js|index\.html|\.test\.mjs)$/.test(f)), 'no page or test files');

  // A fresh project that installs the tarball.
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'course', private: true, type: 'module' }));
  execFileSync(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(work, 'pack', report.filename)],
    { cwd: project, stdio: 'pipe' },
  );
  const installed = path.join(project, 'node_modules/tally-widgets');
  const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.exports['.'].default, './tally-widgets.js');
  const manifest = JSON.parse(readFileSync(path.join(installed, 'custom-elements.json'), 'utf8'));
  assert.equal(manifest.schemaVersion, '1.0.0');
  const tags = manifest.modules
    .flatMap((m) => m.declarations)
    .map((d) => d.tagName)
    .filter(Boolean)
    .sort();
  assert.deepEqual(tags, [
    'tally-collectives',
    'tally-compute',
    'tally-float',
    'tally-inference',
    'tally-memory-budget',
    'tally-recipes',
    'tally-roofline',
    'tally-step',
    'tally-value',
  ]);
  const memory = manifest.modules.flatMap((m) => m.declarations).find((d) => d.tagName === 'tally-memory-budget');
  assert.deepEqual(
    memory.attributes.find((a) => a.name === 'zero').type.text,
    '"0" | "1" | "2" | "3"',
    "ZeRO stages read from the widget's own control",
  );

  // The declarations type-check an author's code and reject a value the widget does not accept.
  writeFileSync(
    path.join(project, 'check.ts'),
    `import 'tally-widgets';
import type { TallyMemoryBudgetAttributes } from 'tally-widgets';
const widget = document.createElement('tally-memory-budget');
widget.ready.then(() => widget.embedAttributes());
const ok: TallyMemoryBudgetAttributes = { model: 'llama-3-8b', zero: '3', gpus: '8' };
// @ts-expect-error ZeRO has no stage 4
const wrong: TallyMemoryBudgetAttributes = { zero: '4' };
document.querySelector('tally-roofline')?.addEventListener('measured', (event) => event.detail);
export { ok, wrong };
`,
  );
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'esnext',
        moduleResolution: 'bundler',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        skipLibCheck: false,
      },
      files: ['check.ts'],
    }),
  );
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
    cwd: project,
    stdio: 'pipe',
  });

  // The project's page imports the package by name (an import map stands in for a bundler) and is served by
  // its own server, on its own origin.
  writeFileSync(
    path.join(project, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course</title><link rel="icon" href="data:,">
<script type="importmap">{"imports": {"tally-widgets": "./node_modules/tally-widgets/tally-widgets.js"}}</script>
<script type="module">import 'tally-widgets';</script></head><body>
<tally-memory-budget model="llama-3-8b" hardware="h100-sxm" gpus="8" zero="3" seq="8192"></tally-memory-budget>
<tally-compute model="llama-3-70b" tokens="15e12" gpus="1024" mfu="0.4"></tally-compute>
<tally-step model="llama-3-70b" gpus="64" tp="8" pp="2"></tally-step>
<tally-float format="e5m2" value="0.1"></tally-float>
</body></html>`,
  );
  const server = await startServer(project, 0, { csp: null });
  const site = await startSite(); // for its browser
  t.after(async () => {
    await site.close();
    await server.close();
  });
  const page = await site.newPage(DESKTOP);
  const wasm = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.wasm')) wasm.push(new URL(r.url()).pathname);
  });
  await page.goto(server.url);
  for (const tag of ['tally-memory-budget', 'tally-compute', 'tally-step', 'tally-float'])
    await assertComputes(page.locator(tag), tag);
  assert.deepEqual(
    await page
      .locator('tally-memory-budget')
      .evaluate((el) => [el.budgetArgs.model, el.budgetArgs.gpus, el.budgetArgs.zero]),
    ['llama-3-8b', 8, 3],
  );
  assert.deepEqual(
    wasm,
    ['/node_modules/tally-widgets/tally.wasm'],
    "the wasm comes from beside the package's engine.js",
  );
  await screenshot(page, 'route-npm', { fullPage: true });
  assert.deepEqual(errors(page), []);
  console.log(
    `# package ${report.filename}: ${report.size} bytes packed, ${report.unpackedSize} unpacked, ${report.entryCount} files`,
  );
});
