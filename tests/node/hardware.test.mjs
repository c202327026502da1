// Today's GPUs (H200, B200, GB200 NVL72, B300, GB300 NVL72, MI300X, MI325X, MI355X) and the block-scaled
// formats (NVFP4, MXFP8, MXFP4): the wasm build answers as the native CLI does, byte for byte, errors included,
// and its answers carry the cited figures (tests/engine/hardware/hardware_test.cpp has the derivations).
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, loadEngine } from './engine.mjs';

const chips = ['h200', 'b200', 'gb200-nvl72', 'b300', 'gb300-nvl72', 'mi300x', 'mi325x', 'mi355x'];

const cases = [
  ['presets', {}],
  ...chips.flatMap((hardware) => [
    ['roofline', { hardware, dtype: 'fp8' }],
    ['roofline', { hardware, dtype: 'fp4' }],
    ['matmul_roofline', { m: 4096, k: 8192, n: 8192, hardware, dtype: 'fp4' }],
    ['training_cost', { params: 70e9, tokens: 15e12, hardware, mfu: 0.4, gpus: 1024, dtype: 'fp8' }],
    ['inference', { model: 'llama-3-8b', context: 8192, batch: 16, hardware, kv_dtype: 'nvfp4' }],
    ['memory_budget', { model: 'llama-3-8b', seq: 4096, hardware, weights: 'nvfp4', gradients: 'mxfp8' }],
  ]),
  ['kv_cache', { model: 'llama-2-7b', context: 4096, kv_dtype: 'mxfp8', weights_dtype: 'nvfp4' }],
  ['kv_cache', { model: 'llama-2-7b', context: 4096, kv_dtype: 'mxfp4' }],
  ['step_time', { model: 'llama-3-8b', hardware: 'gb200-nvl72', gpus: 144, tp: 8 }],
  // Bad input: a dtype outside the field's role, and a peak the chip lacks.
  ['kv_cache', { model: 'llama-2-7b', context: 4096, kv_dtype: 'nvfp5' }],
  ['roofline', { hardware: 'h200', dtype: 'fp4' }],
  ['roofline', { hardware: 'mi355x', dtype: 'tf32' }],
];

test('wasm equals native on the new presets and block-scaled dtypes, errors included', async () => {
  await assertSameEnvelopes(cases);
});

test('the wasm presets carry the dense datasheet peaks: GB300 FP4 15 PFLOP/s, GB200 FP8 5, MI355X FP8 5.0332', async () => {
  const engine = await loadEngine();
  const { hardware } = engine.call('presets', {});
  const peak = (id, dtype) => hardware.find((h) => h.id === id).peak_flops[dtype];
  // NVIDIA GB300 NVL72: 1,080 PFLOPS dense FP4 / 72; GB200 NVL72: 720 PFLOPS FP8 with sparsity / 72 / 2.
  assert.equal(peak('gb300-nvl72', 'fp4'), 1080e15 / 72);
  assert.equal(peak('gb200-nvl72', 'fp8'), 720e15 / 72 / 2);
  assert.equal(peak('b300', 'fp4'), 108e15 / 8);
  assert.equal(peak('mi355x', 'fp8'), 5033.2e12);
  assert.equal(peak('h200', 'fp4'), undefined);
  assert.equal(hardware.find((h) => h.id === 'gb200-nvl72').interconnect.gpus_per_node, 72);
});

test('the wasm KV cache counts block scales: Llama-2-7B NVFP4 147,456 and MXFP8 270,336 bytes a token', async () => {
  const engine = await loadEngine();
  const kv = (kv_dtype) => engine.call('kv_cache', { model: 'llama-2-7b', context: 1, kv_dtype }).bytes_per_token;
  assert.equal(kv('nvfp4'), 147456);
  assert.equal(kv('mxfp8'), 270336);
  assert.equal(kv('mxfp4'), 139264);
  assert.equal(kv('bf16'), 524288);
});

test('a bad dtype names the field and lists the allowed ids, new ones included', async () => {
  const engine = await loadEngine();
  const out = JSON.parse(engine.raw('kv_cache', JSON.stringify({ model: 'llama-2-7b', context: 1, kv_dtype: 'fp5' })));
  assert.equal(out.ok, false);
  assert.equal(out.error.field, 'kv_dtype');
  assert.match(out.error.message, /must be one of .*nvfp4, mxfp8, mxfp4/);
});
