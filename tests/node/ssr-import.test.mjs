// Server-side rendering (issue 26): a static-site generator (VitePress, Astro, Nuxt) imports the widget modules
// in Node while it pre-renders pages, where there is no DOM. Every module the npm package's entry reaches must
// import there without touching HTMLElement, customElements or document, and define nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('every widget module, engine.js and state.js import in Node with no DOM', async () => {
  for (const name of ['HTMLElement', 'customElements', 'document', 'window'])
    assert.equal(globalThis[name], undefined, `this process has no ${name}`);
  const modules = [
    'web/engine.js',
    'web/state.js',
    ...readdirSync(path.join(root, 'web/widgets'))
      .filter((f) => f.endsWith('.js') && !f.endsWith('-worker.js'))
      .map((f) => `web/widgets/${f}`),
  ];
  for (const file of modules) {
    const module = await import(pathToFileURL(path.join(root, file)).href);
    assert.ok(module, `${file} imports`);
  }
  const base = await import(pathToFileURL(path.join(root, 'web/widgets/base.js')).href);
  assert.deepEqual(base.widgetTags(), [], 'nothing is defined on a server');
  const { engineFiles } = await import(pathToFileURL(path.join(root, 'web/engine.js')).href);
  assert.deepEqual(
    Object.values(engineFiles()).map((url) => path.basename(new URL(url).pathname)),
    ['tally.js', 'tally.wasm'],
    'the engine files are named beside engine.js',
  );
});
