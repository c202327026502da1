// The accounting API gives the same answers in wasm as natively, to the last bit, and the shapes the
// widgets read (docs/API.md "Accounting") are there.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, loadEngine, nativeRun } from './engine.mjs';

const gpt2Config = JSON.stringify({
  model_type: 'gpt2',
  n_embd: 768,
  n_layer: 12,
  n_head: 12,
  n_positions: 1024,
  vocab_size: 50257,
});

// A spread of calls: every method, every model form, parallelism, recipes and bad input.
// Llama 3 70B on 15T tokens at 43 % MFU and $2.50 per GPU-hour: in both case lists below.
const llama3Run = {
  model: 'llama-3-70b',
  seq: 8192,
  tokens: 15e12,
  hardware: 'h100-sxm',
  gpus: 1024,
  mfu: 0.43,
  dollars_per_gpu_hour: 2.5,
};
const cases = [
  ['presets', {}],
  ['recipes', {}],
  ['params', { model: 'llama-2-7b' }],
  ['params', { hf_config: gpt2Config }],
  ['params', { model: 'mixtral-8x7b' }],
  ['flops', { model: 'llama-3-8b', seq: 8192, tokens: 15e12 }],
  ['flops', { model: 'gpt3-175b', seq: 2048, tokens: 300e9, attention_flops: 'causal', recompute: 'full' }],
  ['flops', { model: 'llama-3-405b', seq: 131072, tokens: 1e12, flash_attention: true, recompute: 'selective' }],
  ['training_cost', llama3Run],
  ['training_cost', { params: 7e9, tokens: 2e12, peak_tflops: 312, gpus: 64, mfu: 0.37 }],
  ['mfu', { model: 'llama-2-7b', seq: 4096, tokens_per_second: 3.1e4, gpus: 8, hardware: 'a100-80gb' }],
  ['memory_budget', { model: 'llama-2-7b', hardware: 'h100-sxm' }],
  [
    'memory_budget',
    {
      model: 'llama-3-70b',
      seq: 8192,
      gpus: 64,
      tp: 8,
      pp: 2,
      zero: 1,
      sequence_parallel: true,
      recompute: 'selective',
      flash_attention: true,
      global_batch: 64,
      hardware: 'h100-sxm',
    },
  ],
  [
    'memory_budget',
    {
      model: 'gpt3-175b',
      seq: 2048,
      gpus: 1024,
      tp: 8,
      pp: 16,
      zero: 3,
      recipe: 'bf16_mixed_adamw_8bit',
      dropout: false,
      activation_bytes: 4,
      hardware: 'a100-80gb',
    },
  ],
  ['memory_budget', { model: 'mistral-7b', recipe: 'bf16_mixed_adafactor', capacity_bytes: 24e9 }],
  ['fit', { gpus: 8, hardware: 'h100-sxm', recipe: 'bf16_adamw_no_master' }],
  [
    'fit',
    { mode: 'min_gpus', model: 'llama-2-70b', zero: 3, tp: 8, seq: 4096, flash_attention: true, hardware: 'h200' },
  ],
  ['kv_cache', { model: 'llama-2-70b', context: 4096, batch: 8, hardware: 'h100-sxm' }],
  ['memory_budget', { model: 'llama-2-7b', tp: 3, gpus: 3 }],
  ['memory_budget', { model: 'llama-2-7b', seq: 1073741824, micro_batch: 1e9 }],
  ['params', { hf_config: '{"model_type": "llama", "hidden_size": }' }],
  ['params', { hf_config: '{"model_type": "t5"}' }],
  ['flops', { model: 'nope' }],
];

test('wasm and native give the same envelope text for every accounting case', async () => {
  await assertSameEnvelopes(cases);
});

test('exact counts come out as integers in wasm: GPT-2 small, Llama-2-7B, 8 × 80 GB fit', async () => {
  const engine = await loadEngine();
  assert.equal(engine.call('params', { model: 'gpt2-small' }).total, 124439808);
  assert.equal(engine.call('params', { model: 'llama-2-7b' }).total, 6738415616);
  assert.equal(engine.call('fit', { gpus: 8, capacity_bytes: 80e9 }).max_params, 40e9);
  // The H100 preset: 8 × (81,559 MiB − 512 MiB − ceil(5 %)) / 16 B.
  const usable = 81559 * 2 ** 20 - 512 * 2 ** 20 - Math.ceil(0.05 * 81559 * 2 ** 20);
  assert.equal(engine.call('fit', { gpus: 8, hardware: 'h100-sxm' }).max_params, Math.floor((usable * 8) / 16));
  const ridge = engine.call('presets').hardware.find((h) => h.id === 'h100-sxm').ridge_flops_per_byte.bf16;
  assert.ok(Math.abs(ridge - 295.37) < 0.01, `ridge ${ridge}`);
});

test('memory_budget carries what the widget shows: per-term bytes, formulas, capacity, fits, min GPUs', async () => {
  const engine = await loadEngine();
  const r = engine.call('memory_budget', {
    model: 'llama-2-7b',
    gpus: 8,
    zero: 3,
    seq: 4096,
    flash_attention: true,
    recompute: 'selective',
    hardware: 'h100-sxm',
  });
  for (const key of ['weights', 'gradients', 'master_weights', 'optimizer_states', 'activations', 'total'])
    assert.ok(Number.isSafeInteger(r.per_gpu_bytes[key]), key);
  assert.equal(r.classes.length, 5);
  for (const c of r.classes) assert.ok(c.formula && c.description, c.id);
  for (const t of r.activations.terms) assert.ok(t.formula && t.description && Number.isSafeInteger(t.bytes), t.id);
  assert.equal(r.capacity_bytes, 81559 * 2 ** 20, 'the capacity the H100 reports');
  assert.equal(r.usable_bytes, r.capacity_bytes - r.allowance_bytes);
  assert.equal(typeof r.fits, 'boolean');
  assert.ok(r.min_gpus === null || Number.isInteger(r.min_gpus));
  assert.deepEqual(r.bytes_per_param, { weights: 2, gradients: 2, master_weights: 4, optimizer_states: 8, total: 16 });
});

test('the CLI memory --json equals the wasm memory_budget result', async () => {
  const engine = await loadEngine();
  const wasm = engine.call('memory_budget', { model: 'llama-2-7b', gpus: 8, zero: 1, seq: 4096, hardware: 'h100-sxm' });
  const native = JSON.parse(
    nativeRun([
      'memory',
      '--model',
      'llama-2-7b',
      '--gpus',
      '8',
      '--zero',
      '1',
      '--seq',
      '4096',
      '--hardware',
      'h100-sxm',
      '--json',
    ]),
  );
  assert.deepEqual(wasm, native);
});

// Chinchilla reference, tensor_bytes and the decoding bound of kv_cache: whole envelopes, byte for byte.
const envelopeCases = [
  // Chinchilla reference: params given, a dense preset, a mixture of experts; flops with and without tokens.
  ['training_cost', { params: 70e9, tokens: 1.4e12, hardware: 'h100-sxm', gpus: 1024, mfu: 0.5 }],
  ['training_cost', llama3Run],
  ['training_cost', { model: 'mixtral-8x7b', tokens: 1e12, hardware: 'h100-sxm', gpus: 64, mfu: 0.35 }],
  ['training_cost', { params: 7e9, tokens: 3e11, peak_tflops: 312, gpus: 64, mfu: 0.37 }],
  ['flops', { model: 'llama-3-8b', seq: 8192, tokens: 15e12 }],
  ['flops', { model: 'mixtral-8x7b', tokens: 2e12 }],
  ['flops', { model: 'gpt2-small', seq: 1024 }],
  // tensor_bytes: the GPT-3 FFN matrix in every format, packed fp4 with an odd count, overflow and bad shapes.
  ...['fp64', 'fp32', 'bf16', 'fp16', 'fp8', 'e4m3', 'e5m2', 'int8', 'fp4', 'int4', 'int64', 'int32'].map((dtype) => [
    'tensor_bytes',
    { shape: [49152, 12288], dtype },
  ]),
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
  [
    'kv_cache',
    { model: 'llama-2-70b', context: 4096, batch: 4, kv_dtype: 'fp8', weights_dtype: 'fp8', hardware: 'mi300x' },
  ],
  ['kv_cache', { model: 'llama-2-7b', context: 4096, hardware: 'a100-80gb' }],
  ['kv_cache', { model: 'llama-3-8b', context: 8192, capacity_bytes: 80e9 }],
];

test('wasm and native agree on training_cost, flops, tensor_bytes and kv_cache envelopes, errors included', async () => {
  const errors = await assertSameEnvelopes(envelopeCases);
  assert.ok(errors >= 6, `${errors} error envelopes compared`);
});

test('the wasm engine reports the engine-side claims the page shows', async () => {
  const engine = await loadEngine();
  const matrix = engine.call('tensor_bytes', { shape: [49152, 12288], dtype: 'fp32' });
  assert.equal(matrix.bytes, 2415919104, 'GPT-3 FFN matrix in fp32: 2,415,919,104 bytes');
  assert.equal(matrix.bytes / 2 ** 20, 2304, "2304 MiB, not the notes' 2306 MB");
  const chin = engine.call('training_cost', {
    params: 70e9,
    tokens: 1.4e12,
    hardware: 'h100-sxm',
    gpus: 1024,
    mfu: 0.5,
  });
  assert.equal(chin.chinchilla_tokens, 1.4e12);
  assert.equal(chin.tokens_per_param, 20);
  const kv = engine.call('kv_cache', { model: 'llama-3-8b', context: 8192, hardware: 'h100-sxm' });
  assert.equal(kv.decode_tokens_per_s_bound, kv.memory_bandwidth_bytes_per_s / (kv.weights_bytes + kv.kv_cache_bytes));
  assert.equal(Math.round(kv.decode_tokens_per_s_bound), 196);
  assert.throws(
    () => engine.call('tensor_bytes', { shape: [0], dtype: 'fp32' }),
    (e) => e.field === 'shape' && /shape\[0\]/.test(e.message),
  );
});
