// Encoders (BERT), encoder-decoders (T5) and mixture-of-experts parallelism give the same answers in wasm as
// natively, to the last bit, and the published parameter counts come through the JS API.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, hfFixture, loadEngine } from './engine.mjs';

// google-bert/bert-base-uncased and google-t5/t5-small (tests/fixtures/hf) config.json (the fields that matter, as published).
const bertBase = JSON.stringify({
  model_type: 'bert',
  hidden_size: 768,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  intermediate_size: 3072,
  vocab_size: 30522,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  hidden_act: 'gelu',
  hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1,
});
const t5Small = JSON.stringify(JSON.parse(hfFixture('t5-small')));

const cases = [
  ['params', { hf_config: bertBase }],
  ['params', { hf_config: t5Small }],
  ['flops', { hf_config: bertBase, seq: 512, tokens: 3.3e9, attention_flops: 'causal' }],
  ['flops', { hf_config: t5Small, seq: 512, recompute: 'selective' }],
  ['memory_budget', { hf_config: bertBase, seq: 512, micro_batch: 32, hardware: 'a100-80gb' }],
  ['memory_budget', { hf_config: t5Small, seq: 512, micro_batch: 16, gpus: 4, pp: 2, zero: 1 }],
  ['step_time', { hf_config: t5Small, hardware: 'a100-80gb', gpus: 8, seq: 512, micro_batch: 8 }],
  [
    'memory_budget',
    { model: 'mixtral-8x7b', seq: 4096, gpus: 64, tp: 2, zero: 1, ep: 8, capacity_factor: 1.25, hardware: 'h100-sxm' },
  ],
  ['flops', { model: 'mixtral-8x7b', seq: 4096, capacity_factor: 1.25 }],
  [
    'step_time',
    { model: 'mixtral-8x7b', hardware: 'h100-sxm', gpus: 64, tp: 2, seq: 4096, zero: 1, ep: 8, global_batch: 256 },
  ],
  ['memory_budget', { model: 'mixtral-8x7b', gpus: 4, ep: 8 }],
  ['memory_budget', { model: 'llama-2-7b', ep: 2, gpus: 2 }],
  ['params', { hf_config: bertBase, encoder_head: 'masked_lm' }],
  ['params', { hf_config: bertBase, encoder_head: 'pretraining' }],
  ['flops', { hf_config: bertBase, seq: 128, encoder_head: 'masked_lm' }],
  ['flops', { hf_config: t5Small, seq: 512, decoder_seq: 114, recompute: 'selective' }],
  ['memory_budget', { hf_config: t5Small, seq: 512, decoder_seq: 114, micro_batch: 16, gpus: 4, pp: 2, zero: 1 }],
  ['kv_cache', { hf_config: t5Small, context: 64, encoder_context: 512, batch: 8, hardware: 'a100-80gb' }],
  ['kv_cache', { hf_config: bertBase, context: 64 }],
  ['inference', { hf_config: t5Small, context: 64, hardware: 'a100-80gb' }],
];

test('wasm and native give the same envelope text for encoders, encoder-decoders and MoE parallelism', async () => {
  await assertSameEnvelopes(cases);
});

test('BERT-base and t5-small keep their published parameter counts in wasm', async () => {
  const engine = await loadEngine();
  // BertModel (pooler included) and T5ForConditionalGeneration, as transformers counts them.
  assert.equal(engine.call('params', { hf_config: bertBase }).total, 109482240);
  assert.equal(engine.call('params', { hf_config: t5Small }).total, 60506624);
});

test('BERT heads bring BertForMaskedLM and BertForPreTraining counts; T5 takes its own target length', async () => {
  const engine = await loadEngine();
  // transformers' BertForMaskedLM / BertForPreTraining on bert-base-uncased: 109,514,298 and 110,106,428.
  assert.equal(engine.call('params', { hf_config: bertBase, encoder_head: 'masked_lm' }).total, 109514298);
  assert.equal(engine.call('params', { hf_config: bertBase, encoder_head: 'pretraining' }).total, 110106428);
  const same = engine.call('flops', { hf_config: t5Small, seq: 512 });
  const equal = engine.call('flops', { hf_config: t5Small, seq: 512, decoder_seq: 512 });
  assert.equal(equal.forward_per_sequence, same.forward_per_sequence);
  const shorter = engine.call('flops', { hf_config: t5Small, seq: 512, decoder_seq: 114 });
  assert.ok(shorter.forward_per_sequence < same.forward_per_sequence);
  assert.equal(shorter.decoder_seq, 114);
  // An encoder never decodes: kv_cache names the model.
  const r = JSON.parse(engine.raw('kv_cache', JSON.stringify({ hf_config: bertBase, context: 64 })));
  assert.equal(r.ok, false);
  assert.equal(r.error.field, 'model');
});

test('expert parallelism reports the experts each GPU holds and the all-to-all it sends', async () => {
  const engine = await loadEngine();
  const m = engine.call('memory_budget', { model: 'mixtral-8x7b', seq: 4096, gpus: 8, ep: 8 });
  assert.equal(m.setup.moe.local_experts, 1);
  // Dispatch and combine of k·s rows of h bf16 values, 7/8 of them leaving the GPU.
  assert.equal(m.setup.moe.all_to_all_bytes_per_layer_forward, (2 * 2 * 4096 * 4096 * 2 * 7) / 8);
});
