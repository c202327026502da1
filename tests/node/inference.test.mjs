// The inference area (engine/api/api_inference.cpp: inference, paged_kv, speculative_decoding, tp_serving,
// weight_quantization, matmul_roofline, compute_units, checkpoint_size) gives the same envelopes in wasm as the
// native CLI (`tally call METHOD JSON`), byte for byte, errors included: every argument set the page and its worked
// problems use, and bad input.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes } from './engine.mjs';

const cases = [
  // The chapter 9 widget's default and its GQA / KV-format / hardware variants; the worked problems' contexts.
  ['inference', { model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'bf16' }],
  ['inference', { model: 'llama-3-8b', hardware: 'h100-sxm', batch: 8, context: 4096, kv_dtype: 'fp8' }],
  ['inference', { model: 'llama-2-70b', hardware: 'mi300x', batch: 32, context: 2048, kv_dtype: 'int8' }],
  ['inference', { model: 'llama-3-8b', context: 8192, hardware: 'h100-sxm' }],
  ['inference', { model: 'llama-3-8b', context: 128, hardware: 'h100-sxm', batch: 512 }],
  ['inference', { model: 'llama-2-7b', context: 32768, hardware: 'h100-sxm' }],
  ['inference', { model: 'gpt2-small', context: 1024, hardware: 'a100-80gb', compute_dtype: 'fp16' }],
  ['inference', { model: 'llama-3-8b', context: 4096 }],
  ['inference', { model: 'llama-3-8b', context: 0, hardware: 'h100-sxm' }],
  ['inference', { model: 'llama-3-8b', context: 64, kv_dtype: 'fp7', hardware: 'h100-sxm' }],
  ['inference', { model: 'llama-3-8b', context: 64, compute_dtype: 'int3', hardware: 'h100-sxm' }],
  // Serving (serving.h): the chapter's worked problems and bad input.
  ['paged_kv', { model: 'llama-3-8b', reserved_context: 8192, mean_context: 2000, hardware: 'h100-sxm' }],
  ['paged_kv', { model: 'llama-3-70b', hardware: 'h100-sxm' }],
  ['paged_kv', { model: 'llama-3-8b', reserved_context: 1024, mean_context: 2048, hardware: 'h100-sxm' }],
  ['speculative_decoding', { model: 'llama-3-70b', draft_model: 'llama-3-8b', hardware: 'b200' }],
  [
    'speculative_decoding',
    { model: 'llama-3-70b', draft_model: 'llama-3-8b', hardware: 'b200', acceptance_rate: 0.6, draft_tokens: 7 },
  ],
  ['speculative_decoding', { model: 'llama-3-8b', draft_model: 'llama-2-7b', hardware: 'h100-sxm' }],
  ['tp_serving', { model: 'llama-3-70b', tp: 8, context: 8192, batch: 16, hardware: 'h100-sxm' }],
  ['tp_serving', { model: 'llama-3-70b', tp: 4, context: 8192, batch: 1, hardware: 'h100-sxm' }],
  ['tp_serving', { model: 'llama-3-70b', tp: 3, context: 8192, hardware: 'h100-sxm' }],
  ['weight_quantization', { model: 'llama-3-8b', context: 8192, batch: 16, hardware: 'h100-sxm' }],
  ['weight_quantization', { model: 'llama-3-8b', context: 8192, quantized_dtype: 'nvfp4', hardware: 'h100-sxm' }],
  ['weight_quantization', { model: 'llama-3-8b', context: 8192, quantized_dtype: 'none', hardware: 'h100-sxm' }],
  // The roofline curve's weight matmuls and the worked problems' shapes.
  ...[1, 4, 16, 64, 256, 1024, 4096, 16384].map((m) => [
    'matmul_roofline',
    { m, k: 8192, n: 8192, hardware: 'h100-sxm' },
  ]),
  ['matmul_roofline', { m: 4096, k: 4096, n: 14336, hardware: 'h100-sxm' }],
  ['matmul_roofline', { m: 2048, k: 4096, n: 4096, hardware: 'a100-80gb', dtype: 'tf32' }],
  ['matmul_roofline', { m: 0, k: 1, n: 1, hardware: 'h100-sxm' }],
  // Units and checkpoints.
  ['compute_units', { flops: 3.14e23 }],
  ['compute_units', { params: 70e9, tokens: 15e12 }],
  ['compute_units', { params: 70e9, tokens: 15e12, hardware: 'h100-sxm', mfu: 0.4, days: 30 }],
  ['compute_units', { flops: 1e20, hardware: 'h100-sxm', mfu: 2 }],
  ['compute_units', { flops: 1e20, hardware: 'h100-sxm', days: -1 }],
  ['compute_units', { params: 70e9, tokens: 0 }],
  ['checkpoint_size', { model: 'llama-3-70b', recipe: 'bf16_mixed_adamw' }],
  ['checkpoint_size', { model: 'llama-2-7b', recipe: 'fp32_adamw' }],
  ['checkpoint_size', { model: 'mixtral-8x7b' }],
  ['checkpoint_size', { model: 'llama-2-7b', recipe: 'nope' }],
];

test('wasm and native agree on inference, the serving methods, matmul_roofline, compute_units and checkpoint_size, errors included', async () => {
  assert.equal(await assertSameEnvelopes(cases), 13, 'thirteen error envelopes compared');
});
