// DeepSeek Sparse Attention (model_type deepseek_v32) gives the same answers in wasm as natively, to the last bit:
// the indexer's parameters, its FP8 key cache and the top-k attention FLOPs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, hfFixture, loadEngine } from './engine.mjs';

// deepseek-ai/DeepSeek-V3.2-Exp's config.json (tests/fixtures/hf, the fields that matter, as published).
const v32 = JSON.stringify(JSON.parse(hfFixture('deepseek-v3.2-exp')));

const cases = [
  ['params', { hf_config: v32 }],
  ['params', { model: 'deepseek-v3-2-exp' }],
  ['flops', { hf_config: v32, seq: 32768, attention_flops: 'causal' }],
  ['flops', { model: 'deepseek-v3-2-exp', seq: 4096, attention_flops: 'full', recompute: 'selective' }],
  ['kv_cache', { hf_config: v32, context: 131072, batch: 4, hardware: 'h100-sxm' }],
  ['kv_cache', { model: 'deepseek-v3-2-exp', context: 1000, kv_dtype: 'fp8' }],
  ['params', { hf_config: JSON.stringify({ ...JSON.parse(v32), index_topk: 0 }) }],
];

test('wasm and native give the same envelope text for DeepSeek Sparse Attention', async () => {
  assert.equal(await assertSameEnvelopes(cases), 1); // the index_topk 0 case is an error in both
});

test("DeepSeek-V3.2-Exp's indexer key cache and parameter total come through the wasm API", async () => {
  const engine = await loadEngine();
  const p = engine.call('params', { hf_config: v32 });
  // 671,026,419,200 (DeepSeek-V3) + 61 indexers of 1536·64·128 + 7168·128 + 2·128 + 7168·64.
  assert.equal(p.total, 671026419200 + 61 * (1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64));
  const k = engine.call('kv_cache', { hf_config: v32, context: 1000 });
  // 128 FP8 bytes and one FP32 scale per layer, beside MLA's 576 bf16 values.
  assert.equal(k.index_key_bytes_per_token, 61 * 132);
  assert.equal(k.bytes_per_token, 61 * (576 * 2 + 132));
});
