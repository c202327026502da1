// engine/bindings/post.js checks the engine's length limits before copying into wasm memory (which never shrinks),
// with the engine's own messages; web/engine.js keeps a bounded call log. Issue 21, item 4.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule, nativeCall } from './engine.mjs';

const module = await loadModule();

/** The engine's reply for exact bytes, bypassing the glue's checks (malloc, copy, _tally_call). */
function engineDirect(methodBytes, argsBytes) {
  const m = module._malloc(methodBytes.length + 1);
  module.HEAPU8.set(methodBytes, m);
  const a = module._malloc(argsBytes.length + 1);
  module.HEAPU8.set(argsBytes, a);
  const reply = module._tally_call(m, methodBytes.length, a, argsBytes.length);
  const end = module.HEAPU8.indexOf(0, reply); // the reply is NUL-terminated UTF-8 (bindings.cpp)
  const text = new TextDecoder().decode(module.HEAPU8.subarray(reply, end));
  module._tally_free(reply);
  module._free(m);
  module._free(a);
  return text;
}

const encode = (text) => new TextEncoder().encode(text);

test('an oversized argument is refused before it is copied: the heap does not grow, the message is the engine’s', () => {
  const heap = module.HEAPU8.length;
  const huge = '{"x":"' + 'é'.repeat(40 << 20) + '"}'; // 80 MiB of UTF-8, more than the heap holds now
  const envelope = JSON.parse(module.tally_call('params', huge));
  assert.equal(envelope.ok, false);
  assert.equal(envelope.error.field, 'args');
  assert.equal(
    envelope.error.message,
    `the argument text is ${encode(huge).length} bytes; the limit is 1048576 bytes (1 MiB)`,
  );
  assert.equal(module.HEAPU8.length, heap, 'wasm memory did not grow');
  // Just over the limit (by bytes, not UTF-16 units): the glue's reply equals the engine's for the same bytes.
  const over = '{"x":"' + 'é'.repeat(1 << 19) + '"}';
  assert.ok(over.length <= 1 << 20 && encode(over).length > 1 << 20);
  assert.equal(module.tally_call('params', over), engineDirect(encode('params'), encode(over)));
  assert.equal(module.HEAPU8.length, heap);
});

test('an oversized method name is refused with the message the engine gives for the whole name, wasm == native', () => {
  const heap = module.HEAPU8.length;
  const names = ['m'.repeat(65), 'é'.repeat(100), '\u202e'.repeat(400), 'x'.repeat(64 << 20)];
  for (const name of names) {
    const glue = module.tally_call(name, '{}');
    const envelope = JSON.parse(glue);
    assert.equal(envelope.error.field, 'method');
    assert.match(envelope.error.message, /at most 64 bytes/);
    assert.ok(envelope.error.message.length < 300);
    if (name.length < 4096) {
      assert.equal(glue, engineDirect(encode(name), encode('{}')), 'same as the engine for the whole name');
      assert.deepEqual(JSON.parse(nativeCall(name, '{}')), envelope, 'same as native');
    }
  }
  // A refused name wins over oversized arguments, as in the engine, which checks the name first.
  assert.equal(JSON.parse(module.tally_call('m'.repeat(65), 'x'.repeat(2 << 20))).error.field, 'method');
  assert.equal(module.HEAPU8.length, heap, 'wasm memory did not grow');
});

test('errors for hostile values are the same in wasm and native, capped at 1,000 bytes, NUL kept as \\x00', () => {
  const cases = [
    ['float_encode', JSON.stringify({ format: '\u202e'.repeat(400), value: 1 })],
    ['float_encode', '{"format":"ab\\u0000cd","value":1}'],
    ['training_cost', '{"params":1e308,"tokens":1e308,"gpus":8,"peak_tflops":989,"mfu":0.4}'],
    ['training_cost', '{"params":7e9,"tokens":1e12,"gpus":8,"peak_tflops":1e300,"mfu":0.4}'],
    ['block_quantize', '{"scheme":"mxfp8_e4m3","values":[1e308,1e308,-1e308]}'],
  ];
  for (const [method, args] of cases) {
    const wasm = module.tally_call(method, args);
    assert.equal(wasm, nativeCall(method, args), `${method} ${args.slice(0, 60)}`);
    const envelope = JSON.parse(wasm);
    assert.equal(envelope.ok, false);
    assert.ok(Buffer.byteLength(envelope.error.message) <= 1000, `${Buffer.byteLength(envelope.error.message)} bytes`);
    assert.doesNotMatch(envelope.error.message, /\b(nan|inf)\b/i);
  }
  assert.match(JSON.parse(module.tally_call(...cases[1])).error.message, /"ab\\x00cd"/);
});

test('web/engine.js keeps a total call count and a bounded window of recent calls', async () => {
  globalThis.createTallyModule = async () => module;
  const { getEngine, RECENT_CALLS } = await import('../../web/engine.js');
  const engine = await getEngine();
  const start = engine.engineCallCount;
  // methods declares no model argument (an undeclared argument is refused), so it is called without one.
  for (let i = 0; i < 3 * RECENT_CALLS; i++)
    engine.call(...(i % 2 ? ['params', { model: 'llama-2-7b' }] : ['methods', {}]));
  assert.equal(engine.engineCallCount, start + 3 * RECENT_CALLS);
  assert.equal(engine.recentCalls.length, RECENT_CALLS, 'the window is bounded');
  const mark = engine.engineCallCount;
  engine.call('params', { model: 'gpt2-small' });
  assert.deepEqual(engine.engineCallsSince(mark), ['params']);
  assert.deepEqual(engine.engineCallsSince(mark - 2), ['methods', 'params', 'params']);
  assert.throws(() => engine.engineCallsSince(start), /engineCallsSince: count must be a whole number in \[/);
});
