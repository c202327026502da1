// The wasm build gives the same 6ND numbers as the native CLI, to the last bit.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, nativeRun, nativeCall } from './engine.mjs';

const slice = { params: 70e9, tokens: 15e12, gpus: 1024, peak_tflops: 989.5, mfu: 0.5 };

test('wasm training_cost equals the native CLI `time --json` bit for bit', async () => {
  const engine = await loadEngine();
  const wasm = engine.call('training_cost', slice);
  const native = JSON.parse(
    nativeRun([
      'time',
      '--params',
      '70e9',
      '--tokens',
      '15e12',
      '--gpus',
      '1024',
      '--peak-tflops',
      '989.5',
      '--mfu',
      '0.5',
      '--json',
    ]),
  );
  assert.deepEqual(wasm, native);
  assert.equal(wasm.total_flops, 6.3e24);
  assert.ok(Math.abs(wasm.seconds / 86400 - 143.93) < 0.01, `days = ${wasm.seconds / 86400}`);
});

test('the wasm and native envelopes are the same text for good and bad input', async () => {
  const engine = await loadEngine();
  for (const args of [slice, { ...slice, mfu: 1.5 }, { ...slice, gpus: 0 }, { ...slice, params: 'abc' }, {}]) {
    const text = JSON.stringify(args);
    assert.equal(engine.raw('training_cost', text), nativeCall('training_cost', text));
  }
});

test('bad input is an error naming the field, not a wasm abort', async () => {
  const engine = await loadEngine();
  assert.throws(
    () => engine.call('training_cost', { ...slice, mfu: 0 }),
    (e) => e.field === 'mfu',
  );
  assert.throws(
    () => engine.call('training_cost', { ...slice, tokens: -1 }),
    (e) => e.field === 'tokens',
  );
  assert.throws(
    () => engine.call('nope', {}),
    (e) => e.field === 'method',
  );
  // The engine is still usable after errors.
  assert.equal(engine.call('training_cost', slice).six_nd, 6.3e24);
});
