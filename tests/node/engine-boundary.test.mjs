// Only web/engine.js talks to the wasm module (docs/ARCHITECTURE.md, floor 6): no other page script calls the glue's
// factory or tally_call, or reaches into an engine's Module. web/widgets/roofline-worker.js is the one exception, for
// as long as it is a classic worker (it cannot import engine.js, an ES module).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './engine.mjs';

/** Uses of the wasm module: the glue's factory, its exports, or an Engine's Module. */
const WASM_USE = /\bcreateTallyModule\b|\btally_call\b|\btally_methods\b|\.module\.|\bHEAPU8\b/;
const EXCEPTION = 'web/widgets/roofline-worker.js';

function pageScripts(dir = path.join(root, 'web')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return pageScripts(file);
    return entry.name.endsWith('.js') ? [path.relative(root, file)] : [];
  });
}

/** The lines of `text` that use the wasm module, comments left out. */
function wasmUses(text) {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
    .filter((line) => WASM_USE.test(line));
}

test('the check finds a widget that calls the wasm module itself', () => {
  assert.deepEqual(wasmUses('const r = JSON.parse(engine.module.tally_call(m, a));\n// tally_call in a comment'), [
    'const r = JSON.parse(engine.module.tally_call(m, a));',
  ]);
});

test('only web/engine.js (and the classic roofline worker) talks to the wasm module', () => {
  const files = pageScripts();
  assert.ok(files.includes('web/widgets/kit/element.js') && files.includes(EXCEPTION), 'the page scripts are found');
  const offenders = files
    .filter((file) => file !== 'web/engine.js' && file !== EXCEPTION)
    .flatMap((file) => wasmUses(readFileSync(path.join(root, file), 'utf8')).map((line) => `${file}: ${line.trim()}`));
  assert.deepEqual(offenders, []);
  const worker = readFileSync(path.join(root, EXCEPTION), 'utf8');
  assert.match(worker, /importScripts\(/, 'the worker is classic, the reason it is the exception');
  assert.ok(wasmUses(worker).length > 0, 'the exception is still one');
});
