// Issue 23's architectures (MLA, DeepSeek-style MoE with MTP, sliding windows, sinks, QK-norm) give the same
// answers in wasm as natively, to the last bit, for presets and for the config.json fixtures of every new
// model_type; the published counts come through the JS API.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, hfFixture as fixture, loadEngine } from './engine.mjs';

const fixtures = [
  'deepseek-v3',
  'kimi-k2',
  'gpt-oss-120b',
  'gemma2-9b',
  'gemma3-1b',
  'qwen3-8b',
  'qwen3-30b-a3b',
  'mistral-7b-v0.1',
  // Issue 36: new model types and multimodal wrappers (their language model; the vision tower apart).
  'phi-4',
  'olmo3-7b',
  'smollm3-3b',
  'glm-4.5-air',
  'minimax-m2',
  'gemma3-12b-it',
  'llama4-scout',
  'qwen3-vl-8b',
  // Hybrids: gated DeltaNet (Qwen3-Next) and Mamba-2 (Granite 4.0-H) layers with a recurrent state.
  'qwen3-next-80b-a3b',
  'granite-4.0-h-small',
  // Single-module blocks: Nemotron-H's Mamba-2, attention and MLP-only blocks.
  'nemotron-nano-9b-v2',
  'nemotron-h-56b-base-8k',
  // Parallel hybrids: Falcon-H1's attention and Mamba-2 side by side in every layer.
  'falcon-h1-7b-instruct',
  'falcon-h1-1.5b-instruct',
  // Mamba-1 (Jamba) and KDA (Kimi Linear) layers beside attention.
  'jamba-1.5-mini',
  'kimi-linear-48b-a3b-instruct',
  // Older and mid-2024 types: Gemma 1, Granite 3, Qwen1.5-MoE, DeepSeek-V2, GPT-NeoX (Pythia), StarCoder2, OLMoE,
  // InternLM2.
  'gemma-7b',
  'granite-3.1-2b-instruct',
  'qwen1.5-moe-a2.7b',
  'deepseek-coder-v2-lite-base',
  'pythia-160m',
  'starcoder2-3b',
  'olmoe-1b-7b-0924-sft',
  'internlm2.5-7b-chat',
];
const presets = ['deepseek-v3', 'gpt-oss-120b', 'gemma-2-9b', 'mistral-7b'];

const cases = [
  ...fixtures.map((name) => ['params', { hf_config: fixture(name) }]),
  ...fixtures.map((name) => ['flops', { hf_config: fixture(name), seq: 8192, attention_flops: 'causal' }]),
  ...fixtures.map((name) => ['kv_cache', { hf_config: fixture(name), context: 32768, batch: 4 }]),
  ...presets.map((model) => ['params', { model }]),
  ...presets.map((model) => ['flops', { model, seq: 4096, tokens: 14.8e12 }]),
  ...presets.map((model) => ['kv_cache', { model, context: 131072, hardware: 'h100-sxm' }]),
  ...presets.map((model) => ['memory_budget', { model, seq: 4096, gpus: 64, tp: 8, zero: 1, hardware: 'h100-sxm' }]),
  ['inference', { model: 'gpt-oss-120b', context: 8192, hardware: 'h100-sxm' }],
  // kv_layers in a block-scaled format, on a new accelerator.
  ['inference', { model: 'deepseek-v3', context: 131072, hardware: 'b200', kv_dtype: 'nvfp4' }],
  ['kv_cache', { model: 'gemma-2-9b', context: 8192, batch: 2, kv_dtype: 'mxfp8' }],
  // A hybrid's recurrent state in the serving estimate and the capacity.
  ['inference', { hf_config: fixture('granite-4.0-h-small'), context: 131072, hardware: 'h100-sxm' }],
  ['kv_cache', { hf_config: fixture('qwen3-next-80b-a3b'), context: 262144, batch: 2, hardware: 'h200' }],
  ['inference', { hf_config: fixture('nemotron-nano-9b-v2'), context: 131072, hardware: 'h100-sxm' }],
  ['memory_budget', { hf_config: fixture('nemotron-h-56b-base-8k'), seq: 8192, gpus: 64, tp: 8, pp: 2, zero: 1 }],
  ['inference', { hf_config: fixture('falcon-h1-7b-instruct'), context: 131072, hardware: 'h100-sxm' }],
  ['memory_budget', { hf_config: fixture('falcon-h1-7b-instruct'), seq: 8192, gpus: 8, tp: 2, pp: 2, zero: 1 }],
  ['memory_budget', { model: 'deepseek-v3', seq: 4096, gpus: 2048, tp: 1, pp: 16, ep: 64, zero: 1 }],
  ['inference', { hf_config: fixture('jamba-1.5-mini'), context: 262144, hardware: 'h100-sxm' }],
  ['memory_budget', { hf_config: fixture('jamba-1.5-mini'), seq: 8192, gpus: 16, tp: 2, pp: 2, ep: 4, zero: 1 }],
  ['inference', { hf_config: fixture('kimi-linear-48b-a3b-instruct'), context: 131072, hardware: 'h200' }],
  [
    'memory_budget',
    { hf_config: fixture('kimi-linear-48b-a3b-instruct'), seq: 8192, gpus: 32, tp: 2, pp: 2, ep: 8, zero: 1 },
  ],
];

test('wasm and native give the same envelope text for the new architectures', async () => {
  await assertSameEnvelopes(cases);
});

test('published counts through the JS API: DeepSeek-V3 671,026,419,200 (MTP apart), gpt-oss-120b 116.83B', async () => {
  const engine = await loadEngine();
  // DeepSeek-V3 technical report: 671B total, 37B activated; its MTP module is counted apart.
  const ds = engine.call('params', { model: 'deepseek-v3' });
  assert.equal(ds.total, 671026419200);
  assert.equal(Math.round(ds.active / 1e9), 38); // 37.55B: the report's "37B activated"
  assert.equal(ds.mtp.count, 11610068224);
  assert.equal(
    ds.components.reduce((sum, c) => sum + c.count, 0),
    ds.total,
    'components sum to the total without MTP',
  );
  // gpt-oss model card Table 1: 116.83B total.
  assert.equal(engine.call('params', { model: 'gpt-oss-120b' }).total, 116829156672);
  // The latent is all MLA caches: (512 + 64) values per layer, 61 layers, bf16.
  assert.equal(engine.call('kv_cache', { model: 'deepseek-v3', context: 1 }).bytes_per_token, 61 * 576 * 2);
  // Gemma 2 9B at 8,192 tokens: 21 global layers keep all of them, 21 local layers the last 4,096
  // (Gemma 2 report Table 1); each layer K and V of 8 heads of 256 in bf16 = 8,192 bytes a token.
  const gemma = engine.call('kv_cache', { model: 'gemma-2-9b', context: 8192 });
  assert.deepEqual(
    gemma.kv_layers.map((g) => [g.kind, g.layers, g.bytes_per_layer_token, g.tokens]),
    [
      ['full', 21, 8192, 8192],
      ['windowed', 21, 8192, 4096],
    ],
  );
  assert.equal(gemma.kv_cache_bytes, 21 * 8192 * (8192 + 4096));
});

test('bad new fields are refused naming the field, in wasm as natively', async () => {
  const engine = await loadEngine();
  const refused = (args, field) => {
    const envelope = JSON.parse(engine.raw('params', JSON.stringify(args)));
    assert.equal(envelope.ok, false, JSON.stringify(args).slice(0, 80));
    assert.equal(envelope.error.field, field);
    assert.match(envelope.error.message, new RegExp(field));
  };
  const ds = JSON.parse(fixture('deepseek-v3'));
  refused({ hf_config: { ...ds, moe_layer_freq: 2 } }, 'moe_layer_freq');
  refused({ hf_config: { ...ds, some_new_field: 1 } }, 'some_new_field');
  const oss = engine.call('params', { model: 'gpt-oss-120b' }).model;
  refused({ model: { ...oss, num_sliding_layers: 37 } }, 'num_sliding_layers');
  refused({ model: { ...oss, sliding_window: -1 } }, 'sliding_window');
});

test("a hybrid's recurrent state through the JS API: fixed per sequence, in the layer table, named when bad", async () => {
  const engine = await loadEngine();
  const granite = fixture('granite-4.0-h-small');
  const at = (context) => engine.call('kv_cache', { hf_config: granite, context });
  const short = at(4096);
  const long = at(131072);
  // 36 Mamba-2 layers: (d_inner + 2·G·N)·(k − 1) + H·P·N = (8192 + 256)·3 + 128·64·128 elements each, bf16.
  assert.equal(short.state_bytes_per_sequence, 36 * ((8192 + 256) * 3 + 128 * 64 * 128) * 2);
  assert.equal(long.state_bytes_per_sequence, short.state_bytes_per_sequence);
  // The 4 attention layers alone grow with the context.
  assert.equal(long.kv_cache_bytes - short.kv_cache_bytes, (131072 - 4096) * 4 * 2 * 8 * 128 * 2);
  const mamba = long.kv_layers.find((g) => g.kind === 'mamba');
  assert.equal(mamba.layers, 36);
  assert.equal(mamba.recurrent, true);
  assert.equal(
    long.kv_layers.reduce((sum, g) => sum + g.bytes_per_sequence, 0),
    long.kv_cache_bytes,
    'the layer table adds up to the cache of one sequence',
  );
  const bad = JSON.parse(granite);
  bad.layer_types = bad.layer_types.slice(1);
  const envelope = JSON.parse(engine.raw('params', JSON.stringify({ hf_config: bad })));
  assert.equal(envelope.ok, false);
  assert.equal(envelope.error.field, 'layer_types');
});

test('Nemotron Nano 9B v2 through the JS API: 8,888,227,328 parameters (the safetensors total), a bad pattern named', async () => {
  const engine = await loadEngine();
  const nano = fixture('nemotron-nano-9b-v2');
  const p = engine.call('params', { hf_config: nano });
  assert.equal(p.total, 8888227328);
  assert.equal(p.model.num_mlp_layers, 25);
  assert.equal(p.model.mixer_blocks_without_mlp, true);
  const bad = JSON.parse(nano);
  bad.hybrid_override_pattern = bad.hybrid_override_pattern.replace('*', 'E');
  const envelope = JSON.parse(engine.raw('params', JSON.stringify({ hf_config: bad })));
  assert.equal(envelope.ok, false);
  assert.equal(envelope.error.field, 'hybrid_override_pattern');
  // Pasted as Python saved it: time_step_limit [0.0, Infinity] is not JSON, and loads all the same.
  const pasted = nano.replace(/\}\s*$/, ', "time_step_limit": [0.0, Infinity]}');
  assert.equal(engine.call('params', { hf_config: pasted }).total, 8888227328);
});

test('Falcon-H1-7B-Instruct through the JS API: 7,585,654,880 parameters (the Hub total), K/V and a state in every layer', async () => {
  const engine = await loadEngine();
  const falcon = fixture('falcon-h1-7b-instruct');
  const p = engine.call('params', { hf_config: falcon });
  assert.equal(p.total, 7585654880);
  assert.equal(p.model.parallel_hybrid, true);
  const k = engine.call('kv_cache', { hf_config: falcon, context: 4096 });
  // 44 layers: (3072 + 2·256)·3 + 24·128·256 state elements each, bf16; K and V of 2 heads of 128 a token.
  assert.equal(k.state_bytes_per_sequence, 44 * (3584 * 3 + 24 * 128 * 256) * 2);
  assert.equal(k.bytes_per_token, 44 * 2 * 2 * 128 * 2);
  assert.deepEqual(
    k.kv_layers.map((g) => [g.kind, g.layers]),
    [
      ['full', 44],
      ['mamba', 44],
    ],
  );
  const bad = JSON.parse(falcon);
  bad.mamba_d_head = 64;
  const envelope = JSON.parse(engine.raw('params', JSON.stringify({ hf_config: bad })));
  assert.equal(envelope.ok, false);
  assert.equal(envelope.error.field, 'mamba_d_head');
});

test('Jamba 1.5 Mini and Kimi-Linear-48B through the JS API: their safetensors totals, states, bad lists named', async () => {
  const engine = await loadEngine();
  const jamba = fixture('jamba-1.5-mini');
  assert.equal(engine.call('params', { hf_config: jamba }).total, 51570323328);
  const jk = engine.call('kv_cache', { hf_config: jamba, context: 4096 });
  // 28 Mamba-1 layers: d_inner·(k − 1) + d_inner·N = 8192·3 + 8192·16 elements each, bf16.
  assert.equal(jk.state_bytes_per_sequence, 28 * (8192 * 3 + 8192 * 16) * 2);
  assert.deepEqual(
    jk.kv_layers.map((g) => [g.kind, g.layers]),
    [
      ['full', 4],
      ['mamba', 28],
    ],
  );
  const kimi = fixture('kimi-linear-48b-a3b-instruct');
  const kp = engine.call('params', { hf_config: kimi });
  assert.equal(kp.total, 49122681728);
  assert.equal(kp.model.linear_kind, 'kda');
  const kk = engine.call('kv_cache', { hf_config: kimi, context: 4096 });
  // 20 KDA layers: 3·4096·(4 − 1) conv values and 32 heads of 128 x 128, bf16; 7 MLA layers cache 512 + 64 a token.
  assert.equal(kk.state_bytes_per_sequence, 20 * (3 * 4096 * 3 + 32 * 128 * 128) * 2);
  assert.equal(kk.bytes_per_token, 7 * 576 * 2);
  const refused = (config, field) => {
    const envelope = JSON.parse(engine.raw('params', JSON.stringify({ hf_config: config })));
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error.field, field);
  };
  refused({ ...JSON.parse(jamba), attn_layer_period: 0 }, 'attn_layer_period');
  const short = JSON.parse(kimi);
  short.linear_attn_config.kda_layers = short.linear_attn_config.kda_layers.slice(1);
  refused(short, 'linear_attn_config.kda_layers');
});
