// The accounting follow-ups (Chinchilla reference, tensor_bytes, the decoding bound of kv_cache) give the
// same envelopes in wasm as the native CLI (`tally call METHOD JSON`), byte for byte, errors included.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, nativeCall } from './engine.mjs';

const cases = [
  // Chinchilla reference: params given, a dense preset, a mixture of experts; flops with and without tokens.
  ['training_cost', { params: 70e9, tokens: 1.4e12, hardware: 'h100-sxm', gpus: 1024, mfu: 0.5 }],
  ['training_cost', { model: 'llama-3-70b', seq: 8192, tokens: 15e12, hardware: 'h100-sxm', gpus: 1024, mfu: 0.43, dollars_per_gpu_hour: 2.5 }],
  ['training_cost', { model: 'mixtral-8x7b', tokens: 1e12, hardware: 'h100-sxm', gpus: 64, mfu: 0.35 }],
  ['training_cost', { params: 7e9, tokens: 3e11, peak_tflops: 312, gpus: 64, mfu: 0.37 }],
  ['flops', { model: 'llama-3-8b', seq: 8192, tokens: 15e12 }],
  ['flops', { model: 'mixtral-8x7b', tokens: 2e12 }],
  ['flops', { model: 'gpt2-small', seq: 1024 }],
  // tensor_bytes: the GPT-3 FFN matrix in every format, packed fp4 with an odd count, overflow and bad shapes.
  ...['fp64', 'fp32', 'bf16', 'fp16', 'fp8', 'e4m3', 'e5m2', 'int8', 'fp4', 'int4', 'int64', 'int32']
    .map((dtype) => ['tensor_bytes', { shape: [49152, 12288], dtype }]),
  ['tensor_bytes', { shape: [3, 5], dtype: 'fp4' }],
  ['tensor_bytes', { shape: [2 ** 31, 2 ** 30], dtype: 'fp32' }],
  ['tensor_bytes', { shape: [2 ** 31, 2 ** 30], dtype: 'fp64' }],
  ['tensor_bytes', { shape: [], dtype: 'fp32' }],
  ['tensor_bytes', { shape: [4096, -3], dtype: 'fp32' }],
  ['tensor_bytes', { shape: [4096.5, 2], dtype: 'fp32' }],
  ['tensor_bytes', { shape: Array(33).fill(2), dtype: 'int8' }],
  ['tensor_bytes', { shape: [4096, 4096], dtype: 'fp12' }],
  ['tensor_bytes', { shape: [4096, 4096] }],
  // kv_cache decoding bound: batch 1 and 16, several chips, none without a hardware preset.
  ['kv_cache', { model: 'llama-3-8b', context: 8192, batch: 1, kv_dtype: 'bf16', hardware: 'h100-sxm' }],
  ['kv_cache', { model: 'llama-3-8b', context: 8192, batch: 16, kv_dtype: 'bf16', hardware: 'h100-sxm' }],
  ['kv_cache', { model: 'llama-2-70b', context: 4096, batch: 4, kv_dtype: 'fp8', weights_dtype: 'fp8', hardware: 'mi300x' }],
  ['kv_cache', { model: 'llama-2-7b', context: 4096, hardware: 'a100-80gb' }],
  ['kv_cache', { model: 'llama-3-8b', context: 8192, capacity_bytes: 80e9 }],
];

test('wasm and native agree on training_cost, flops, tensor_bytes and kv_cache envelopes, errors included', async () => {
  const engine = await loadEngine();
  let errors = 0;
  for (const [method, args] of cases) {
    const json = JSON.stringify(args);
    const wasm = engine.raw(method, json);
    assert.equal(wasm, nativeCall(method, json), `${method} ${json}`);
    if (!JSON.parse(wasm).ok) errors++;
  }
  assert.ok(errors >= 6, `${errors} error envelopes compared`);
});

test('the wasm engine reports the engine-side claims the page shows', async () => {
  const engine = await loadEngine();
  const matrix = engine.call('tensor_bytes', { shape: [49152, 12288], dtype: 'fp32' });
  assert.equal(matrix.bytes, 2415919104, 'GPT-3 FFN matrix in fp32: 2,415,919,104 bytes');
  assert.equal(matrix.bytes / 2 ** 20, 2304, '2304 MiB, not the notes\' 2306 MB');
  const chin = engine.call('training_cost', { params: 70e9, tokens: 1.4e12, hardware: 'h100-sxm', gpus: 1024, mfu: 0.5 });
  assert.equal(chin.chinchilla_tokens, 1.4e12);
  assert.equal(chin.tokens_per_param, 20);
  const kv = engine.call('kv_cache', { model: 'llama-3-8b', context: 8192, hardware: 'h100-sxm' });
  assert.equal(kv.decode_tokens_per_s_bound, kv.memory_bandwidth_bytes_per_s / (kv.weights_bytes + kv.kv_cache_bytes));
  assert.equal(Math.round(kv.decode_tokens_per_s_bound), 196);
  assert.throws(() => engine.call('tensor_bytes', { shape: [0], dtype: 'fp32' }), (e) => e.field === 'shape' && /shape\[0\]/.test(e.message));
});
