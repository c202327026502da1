// The wasm build encodes floats exactly as the native build does: a million pseudo-random float patterns per
// format and rounding mode hash to the same value, and explicit examples give the same envelopes as text.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, nativeCall, native, FLOAT_FORMATS as FORMATS } from './engine.mjs';

test('a million float patterns per format encode to the same codes in wasm and native', async () => {
  const engine = await loadEngine();
  const runs = [];
  for (const format of FORMATS) runs.push({ format, saturate: true }, { format, saturate: false });
  runs.push(
    { format: 'e8m0', rounding: 'toward_zero' },
    { format: 'e8m0', rounding: 'up' },
    { format: 'tf32', rounding: 'nearest_away' },
    { format: 'e2m1', rounding: 'toward_zero' },
    { format: 'fp16', rounding: 'down' },
  );
  for (const run of runs) {
    const args = { ...run, count: 1_000_000, seed: 20260101 };
    const wasm = engine.call('float_encode_batch', args);
    const nat = native('float_encode_batch', args);
    assert.equal(wasm.count, 1_000_000);
    assert.equal(wasm.hash, nat.hash, `${JSON.stringify(run)}: wasm ${wasm.hash} native ${nat.hash}`);
    assert.deepEqual(wasm.first_codes, nat.first_codes);
    assert.equal(wasm.nan_codes, nat.nan_codes);
  }
});

test('explicit examples give the same envelope text in wasm and native', async () => {
  const engine = await loadEngine();
  const values = [
    '0.1',
    '1e-8',
    '500',
    '-0',
    'inf',
    '-inf',
    'nan',
    '464',
    '65520',
    '6.103515625e-05',
    '1e-400',
    '1e400',
    '0x1.8p-3',
    '-7.75',
    0.3,
    448,
  ];
  for (const format of FORMATS) {
    for (const value of values) {
      const text = JSON.stringify({ format, value });
      assert.equal(engine.raw('float_encode', text), nativeCall('float_encode', text), `${format} ${value}`);
    }
  }
  const compare = JSON.stringify({ value: '0.1', rounding: 'rz' });
  assert.equal(engine.raw('float_compare', compare), nativeCall('float_compare', compare));
  const blocks = JSON.stringify({
    generate: { n: 96, seed: 11, outlier: 60 },
    schemes: ['mxfp4', 'nvfp4', 'fp8_tensor', 'mxfp8_e4m3'],
  });
  assert.equal(engine.raw('block_compare', blocks), nativeCall('block_compare', blocks));
});

test('known codes: 1e-8 is 0 in fp16 and 0x322c in bf16; 500 is 0x7e in e4m3; 0.1 is 0x2e66 in fp16', async () => {
  const engine = await loadEngine();
  assert.equal(engine.call('float_encode', { format: 'fp16', value: '1e-8' }).code, 0);
  assert.equal(engine.call('float_encode', { format: 'bf16', value: '1e-8' }).code, 0x322c);
  const e4m3 = engine.call('float_encode', { format: 'e4m3', value: '500' });
  assert.equal(e4m3.hex, '0x7e');
  assert.equal(e4m3.value, 448);
  assert.equal(e4m3.saturated, true);
  assert.equal(engine.call('float_encode', { format: 'fp16', value: '0.1' }).hex, '0x2e66');
  assert.equal(engine.call('float_encode', { format: 'fp16', value: '0.1' }).exact, '0.0999755859375');
  assert.equal(engine.call('float_decode', { format: 'e2m1', hex: '0x7' }).value, 6);
});

test('bad input is an error naming the field in wasm, and the engine keeps working', async () => {
  const engine = await loadEngine();
  const bad = [
    ['float_encode', { format: 'e4m3', value: '' }, 'value'],
    ['float_encode', { format: 'e4m3', value: 'abc' }, 'value'],
    ['float_decode', { format: 'e4m3', hex: '0x1234' }, 'hex'],
    ['float_decode', { format: 'e4m3', hex: '0x7e', flip_bit: 8 }, 'flip_bit'],
    ['float_decode', { format: 'e4m3', code: 300 }, 'code'],
    ['float_encode', { format: 'fp7', value: '1' }, 'format'],
  ];
  for (const [method, args, field] of bad) {
    assert.throws(
      () => engine.call(method, args),
      (e) => e.field === field && e.message.length > 10,
      `${method} ${JSON.stringify(args)}`,
    );
    const text = JSON.stringify(args);
    assert.equal(engine.raw(method, text), nativeCall(method, text));
  }
  assert.equal(engine.call('float_encode', { format: 'e4m3', value: 1 }).code, 0x38);
});
