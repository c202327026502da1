// engine/bindings/bindings.cpp + post.js: the JS entry points of the wasm build. The glue evaluates no generated
// code (a page needs only 'wasm-unsafe-eval' in its CSP), strings arrive exactly as sent, and no call leaks memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadModule, wasmDir } from './engine.mjs';

const module = await loadModule();

/** Where malloc places a 1 MiB block: it moves up when something below it was allocated and never freed. */
const heapTop = () => {
  const p = module._malloc(1 << 20);
  module._free(p);
  return p;
};

test('tally.js evaluates no generated code (no eval, no new Function, no Embind)', () => {
  const glue = readFileSync(path.join(wasmDir, 'tally.js'), 'utf8');
  assert.doesNotMatch(glue, /\beval\s*\(/);
  assert.doesNotMatch(glue, /\bnew\s+Function\s*\(/);
  assert.doesNotMatch(glue, /[^.\w]Function\s*\(/);
  assert.doesNotMatch(glue, /embind|craftInvokerFunction/i);
});

test('tally_call and tally_methods return envelopes as JSON text', () => {
  const ok = JSON.parse(module.tally_call('params', '{"model":"llama-2-7b"}'));
  assert.equal(ok.ok, true);
  assert.equal(ok.result.total, 6738415616);
  const methods = JSON.parse(module.tally_methods());
  assert.ok(methods.some((m) => m.name === 'params'));
});

test('text reaches the engine as sent: a lone surrogate becomes U+FFFD instead of swallowing the next character', () => {
  const envelope = JSON.parse(module.tally_call('params', '{"model":"\ud800"}'));
  assert.equal(envelope.ok, false);
  assert.equal(
    envelope.error.field,
    'model',
    'the closing quote survived, so the JSON parsed and the model was looked up',
  );
  assert.match(envelope.error.message, /\ufffd/);
});

test('a NUL inside the method name is part of the name (lengths cross the boundary, not C strings)', () => {
  const envelope = JSON.parse(module.tally_call('params\0', '{"model":"llama-2-7b"}'));
  assert.equal(envelope.ok, false, '"params\\0" is not "params"');
  assert.equal(envelope.error.field, 'method');
});

test('every call frees what it allocated: valid, invalid and non-ASCII input, 20,000 calls', () => {
  const inputs = [
    ['params', '{"model":"llama-2-7b"}'],
    ['params', 'é'],
    ['params', '{"model":"“llama”"}'],
    ['nope', '{}'],
    ['memory_budget', '{"hf_config":"{\\u201cmodel_type\\u201d: 1}"}'],
    ['params', 'x'.repeat(5000)],
  ];
  for (const [m, a] of inputs) module.tally_call(m, a); // first calls may allocate lasting caches
  const top = heapTop();
  const heap = module.HEAPU8.length;
  for (let i = 0; i < 20000; i++) {
    const [m, a] = inputs[i % inputs.length];
    const envelope = JSON.parse(module.tally_call(m, a));
    assert.equal(typeof envelope.ok, 'boolean');
  }
  assert.equal(heapTop(), top, 'malloc hands out the same block: nothing leaked');
  assert.equal(module.HEAPU8.length, heap, 'the heap did not grow');
  assert.equal(
    JSON.parse(module.tally_call('params', '{"model":"llama-2-7b"}')).result.total,
    6738415616,
    'still answers',
  );
});
