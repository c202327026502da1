// Every engine-computed number in the prose (<tally-value>) against a value computed here, independently of
// the engine: plain arithmetic from the published formulas and the preset files (read as JSON, not through
// the engine), or a cited published figure. A wrong default (dropout on for Llama, 80e9 bytes for an H100)
// cannot hide behind a correct formula. The test fails if any inline number on the page has no expectation.
// It reads the page scripts/build/build-site.mjs prerendered (build/site/index.html, every <tally-value> written with
// the engine's number); tests/browser/prerender.test.mjs checks that the browser shows the same text live.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, siteDir, nativeCli, native, nativeRun, PLANNER_EXAMPLE } from './engine.mjs';

const preset = (kind, id) => JSON.parse(readFileSync(path.join(root, 'content/presets', kind, `${id}.json`), 'utf8'));
const MiB = 2 ** 20;
const BYTES = { fp32: 4, bf16: 2, fp16: 2, fp8: 1 };

/** Parameters of a tally config, counted from the architecture (Vaswani et al. 2017; GPT-2/Llama layouts). */
function params(c) {
  const h = c.hidden_size,
    a = c.num_heads,
    kv = c.num_kv_heads ?? a,
    d = c.head_dim ?? h / a,
    V = c.vocab_size,
    L = c.num_layers;
  const f = c.ffn_hidden_size ?? 4 * h;
  const norm = (c.norm ?? 'layernorm') === 'layernorm' ? 2 * h : h;
  const attn =
    h * a * d + 2 * h * kv * d + a * d * h + (c.qkv_bias ? a * d + 2 * kv * d : 0) + (c.attn_out_bias ? h : 0);
  const mats = c.mlp === 'gelu' ? 2 : 3;
  const expert = mats * h * f + (c.mlp_bias ? (mats - 1) * f + h : 0);
  const experts = c.num_experts ?? 0;
  const mlp = experts ? experts * expert + h * experts : expert;
  const mlpActive = experts ? c.experts_per_token * expert + h * experts : expert;
  const outside = V * h + (c.position === 'learned' ? c.max_positions * h : 0) + norm + (c.tied_embeddings ? 0 : V * h);
  return { total: outside + L * (attn + mlp + 2 * norm), active: outside + L * (attn + mlpActive + 2 * norm) };
}

/** Capacity of a hardware preset as the page uses it: reported bytes less 512 MiB and ceil(5 %). */
function usable(hwId) {
  const reported = preset('hardware', hwId).memory_reported_bytes;
  const allowance = 512 * MiB + Math.ceil(0.05 * reported);
  return { reported, allowance, usable: reported - allowance };
}

/**
 * Activation bytes of a Llama-style (no dropout, gated MLP) model: Korthikanti et al. 2022's terms, tensor by tensor.
 * With FlashAttention the s×s softmax output is not kept; one fp32 log-sum-exp per row and head is (Dao et al. 2022, sec. 3.1).
 */
function llamaActivations(c, s, b, recompute, flash = false) {
  const h = c.hidden_size,
    a = c.num_heads,
    kv = c.num_kv_heads,
    d = c.head_dim ?? h / a,
    f = c.ffn_hidden_size,
    e = 2;
  const sb = s * b;
  const layer =
    e * sb * h * 2 +
    e * sb * a * d +
    2 * e * sb * kv * d +
    e * sb * a * d +
    e * sb * h * 2 +
    3 * e * sb * f +
    (flash ? 4 * a * sb : 0);
  const scores = flash ? 0 : e * a * s * s * b; // softmax output; no dropout mask, no dropped copy
  const outside = 2 * e * sb * h + 4 * sb * c.vocab_size; // final norm input, LM head input, fp32 logits
  if (recompute === 'full') return e * sb * h * c.num_layers + (layer + scores) + outside;
  if (recompute === 'selective') return layer * c.num_layers + outside;
  return (layer + scores) * c.num_layers + outside;
}

/**
 * Forward FLOPs per token of a dense model at sequence s (Kaplan et al. 2020 table 1, full s×s attention). Causal
 * attention scores s(s+1)/2 entries per head instead of s², so a token attends to (s+1)/2 keys on average.
 */
function forwardPerToken(c, s, causal = false) {
  const h = c.hidden_size,
    a = c.num_heads,
    kv = c.num_kv_heads,
    d = c.head_dim ?? h / a,
    f = c.ffn_hidden_size,
    L = c.num_layers;
  const mats = c.mlp === 'gelu' ? 2 : 3;
  const scores = 2 * (causal ? (s + 1) / 2 : s) * a * d * L;
  return {
    total:
      2 * h * (a * d + 2 * kv * d) * L + 2 * scores + 2 * a * d * h * L + 2 * h * f * mats * L + 2 * h * c.vocab_size,
    scores,
  };
}

/**
 * A double rounded to a binary format with `exponentBits` and `mantissaBits` (IEEE 754-2019 sec. 4.3.1,
 * roundTiesToEven), subnormals included; the values rounded here are far from overflow.
 */
function roundToFormat(x, exponentBits, mantissaBits) {
  const minExponent = 2 - 2 ** (exponentBits - 1); // 1 − bias
  let e = Math.floor(Math.log2(Math.abs(x)));
  if (2 ** e > Math.abs(x)) e -= 1;
  if (2 ** (e + 1) <= Math.abs(x)) e += 1;
  const quantum = 2 ** (Math.max(e, minExponent) - mantissaBits);
  const q = x / quantum; // exact: division by a power of two
  const down = Math.floor(q);
  const r = q - down > 0.5 || (q - down === 0.5 && down % 2 !== 0) ? down + 1 : down;
  return r * quantum;
}

function expectations() {
  const map = new Map();
  const put = (method, args, field, value, why) =>
    map.set(`${method}|${JSON.stringify(args)}|${field}`, { value, why });
  // Chapter 1 / errata: the GPT-3 feed-forward matrix, 49,152 × 12,288 (Brown et al. 2020, d_ff = 4 d_model).
  const elements = 49152 * 12288;
  for (const dtype of ['fp32', 'bf16', 'fp8'])
    put(
      'tensor_bytes',
      { shape: [49152, 12288], dtype },
      'bytes',
      elements * BYTES[dtype],
      'elements × bytes per element',
    );
  put('tensor_bytes', { shape: [49152, 12288], dtype: 'fp32' }, 'elements', elements, 'rows × columns');
  for (const dtype of ['fp32', 'bf16', 'fp8'])
    put('presets', {}, `dtypes[id=${dtype}].bytes`, BYTES[dtype], 'IEEE 754 / OCP FP8 widths');
  const gpt3 = preset('models', 'gpt3-175b').config;
  const n3 = params(gpt3).total;
  assert.ok(Math.abs(n3 / 175e9 - 1) < 0.01, 'GPT-3 is about 175B parameters (Brown et al. 2020)');
  put('params', { model: 'gpt3-175b' }, 'total', n3, 'architecture count');
  put('params', { model: 'gpt3-175b' }, 'tensors[name=layers.*.mlp.up.weight].count', 12288 * 49152, 'd_model × d_ff');
  for (const [recipe, weights, bytes] of [
    ['fp32_adamw', undefined, 4],
    ['bf16_mixed_adamw', undefined, 2],
    ['bf16_mixed_adamw', 'fp8', 1],
  ]) {
    const args = weights ? { model: 'gpt3-175b', recipe, weights, seq: 1 } : { model: 'gpt3-175b', recipe, seq: 1 };
    put('memory_budget', args, 'per_gpu_bytes.weights', n3 * bytes, 'N × bytes per weight');
  }
  // Chapter 2: format constants (IEEE 754-2019; OCP 8-bit floating point spec v1.0 for E4M3/E5M2; OCP MX v1.0 for E2M1).
  const formats = {
    fp32: [2 ** -126, (2 - 2 ** -23) * 2 ** 127, 2 ** -23],
    fp16: [2 ** -14, 65504, 2 ** -10],
    bf16: [2 ** -126, (2 - 2 ** -7) * 2 ** 127, 2 ** -7],
    e5m2: [2 ** -14, 57344, 2 ** -2],
    e4m3: [2 ** -6, 448, 2 ** -3],
    e2m1: [1, 6, 2 ** -1],
  };
  for (const [name, [minNormal, max, eps]] of Object.entries(formats)) {
    put('float_formats', {}, `formats[name=${name}].constants.min_normal.value`, minNormal, 'smallest normal');
    put('float_formats', {}, `formats[name=${name}].constants.max.value`, max, 'largest finite');
    put('float_formats', {}, `formats[name=${name}].constants.epsilon.value`, eps, 'gap above 1');
  }
  // Chapter 3: 6ND for GPT-3 on 300B tokens, within 0.5 % of the paper's 3.14e23 (Brown et al. 2020, table D.1).
  put('flops', { model: 'gpt3-175b', seq: 2048, tokens: 300e9 }, 'six_nd', 6 * n3 * 300e9, '6ND');
  assert.ok(Math.abs((6 * n3 * 300e9) / 3.14e23 - 1) < 0.005);
  const mixtral = params(preset('models', 'mixtral-8x7b').config);
  put('params', { model: 'mixtral-8x7b' }, 'total', mixtral.total, 'all experts');
  put('params', { model: 'mixtral-8x7b' }, 'active', mixtral.active, 'two experts per token');
  assert.ok(
    Math.abs(mixtral.total / 46.7e9 - 1) < 0.01 && Math.abs(mixtral.active / 12.9e9 - 1) < 0.01,
    'Jiang et al. 2024: 47B total, 13B active',
  );
  // Chapter 4: 70B on 15T tokens, 1024 H100s (dense bf16 989.5 TFLOP/s, half the datasheet's sparse 1,979) at 50 % MFU.
  const h100 = preset('hardware', 'h100-sxm');
  const peak = h100.peak_tflops.bf16 * 1e12;
  assert.equal(peak * 2, 1979e12, 'NVIDIA H100 datasheet: 1,979 TFLOP/s bf16 with sparsity');
  const timeArgs = { params: 70e9, tokens: 15e12, hardware: 'h100-sxm', gpus: 1024, mfu: 0.5 };
  const days = (6 * 70e9 * 15e12) / (1024 * peak * 0.5) / 86400;
  put('training_cost', timeArgs, 'six_nd', 6 * 70e9 * 15e12, '6ND');
  put('training_cost', timeArgs, 'seconds', days * 86400, '6ND / (GPUs · peak · MFU)');
  put('training_cost', timeArgs, 'gpu_seconds', days * 86400 * 1024, 'seconds × GPUs');
  // Chapter 6: the token rate that run must read, 15T tokens over its seconds (int32 ids: 4 bytes each).
  put('training_cost', timeArgs, 'tokens_per_second', 15e12 / (days * 86400), 'tokens / seconds');
  put('training_cost', timeArgs, 'tokens_per_second_per_gpu', 15e12 / (days * 86400 * 1024), 'tokens / GPU-seconds');
  assert.ok((4 * 15e12) / (days * 86400 * 1024) < 5e3, 'the page says under 5 kB/s per GPU');
  put('roofline', { hardware: 'h100-sxm', dtype: 'bf16' }, 'peak_flops_per_s', peak, 'preset dense bf16 peak');
  const cap = usable('h100-sxm');
  assert.equal(cap.reported, 81559 * MiB, 'nvidia-smi reports 81,559 MiB on an H100 80GB HBM3');
  const budgetArgs = { model: 'llama-2-7b', hardware: 'h100-sxm' };
  put('memory_budget', budgetArgs, 'capacity_bytes', cap.reported, 'reported capacity');
  put('memory_budget', budgetArgs, 'allowance_bytes', cap.allowance, '512 MiB + 5 %');
  put('memory_budget', budgetArgs, 'usable_bytes', cap.usable, 'reported − allowance');
  // The "80 GB" label is binary on an A100 80GB: nvidia-smi reports 81,920 MiB, exactly 80 GiB.
  assert.equal(usable('a100-80gb').reported, 80 * 2 ** 30, 'nvidia-smi reports 81,920 MiB on an A100 80GB');
  put('memory_budget', { model: 'llama-2-7b', hardware: 'a100-80gb' }, 'capacity_bytes', 80 * 2 ** 30, '80 GiB');
  assert.ok(
    cap.reported > 80e9 && cap.usable > 80e9,
    'the page says the H100 reports, and leaves usable, more than 80e9',
  );
  for (const [gpus, recipe, bpp] of [
    [8, 'bf16_mixed_adamw', 16],
    [8, 'bf16_adamw_no_master', 12],
    [1, 'bf16_adamw_no_master', 12],
  ]) {
    put(
      'fit',
      { mode: 'largest_model', hardware: 'h100-sxm', gpus, recipe },
      'max_params',
      Math.floor((cap.usable * gpus) / bpp),
      'usable × GPUs / bytes per parameter',
    );
    put(
      'fit',
      { mode: 'largest_model', gpus, hardware: 'h100-sxm', recipe },
      'max_params',
      Math.floor((cap.usable * gpus) / bpp),
      'usable × GPUs / bytes per parameter',
    );
  }
  put(
    'fit',
    { mode: 'largest_model', capacity_bytes: 80e9, gpus: 8, recipe: 'bf16_adamw_no_master' },
    'max_params',
    Math.floor(640e9 / 12),
    "the seed notes' 8 × 80 GB / 12",
  );
  put(
    'fit',
    { mode: 'largest_model', gpus: 8, capacity_bytes: 80e9, recipe: 'bf16_adamw_no_master' },
    'max_params',
    Math.floor(640e9 / 12),
    "the seed notes' 8 × 80 GB / 12",
  );
  // Chapter 6 / errata: fp32 AdamW on Llama 2 7B: 4 + 4 + 8 bytes per parameter, no master copy.
  const l27 = preset('models', 'llama-2-7b').config;
  const n7 = params(l27).total;
  for (const args of [
    { model: 'llama-2-7b', recipe: 'fp32_adamw', seq: 128 },
    { model: 'llama-2-7b', recipe: 'fp32_adamw', seq: 128, micro_batch: 1 },
  ]) {
    put('memory_budget', args, 'per_gpu_bytes.weights', 4 * n7, 'N × 4');
    put('memory_budget', args, 'per_gpu_bytes.gradients', 4 * n7, 'N × 4');
    put('memory_budget', args, 'per_gpu_bytes.optimizer_states', 8 * n7, 'N × (4 + 4)');
    put('memory_budget', args, 'bytes_per_param.total', 16, '4 + 4 + 8');
  }
  put(
    'memory_budget',
    { model: 'llama-2-7b', recipe: 'bf16_mixed_adamw' },
    'bytes_per_param.total',
    16,
    '2 + 2 + 4 + 8',
  );
  // Chapter 5: roofline of the H100 (3.35 TB/s HBM3) in bf16 at the default s = 2048, d = 4096.
  const bw = h100.memory_bandwidth_tb_s * 1e12;
  const roof = { hardware: 'h100-sxm', dtype: 'bf16' };
  put('roofline', roof, 'ridge_flops_per_byte', peak / bw, 'peak / bandwidth (Williams et al. 2009)');
  put('roofline', roof, 'bandwidth_bytes_per_s', bw, 'datasheet bandwidth');
  for (const n of [256, 4096])
    put('roofline', roof, `ops[id=matmul-${n}].intensity`, (2 * n ** 3) / (2 * 3 * n * n), '2n³ / (3n² · 2 bytes)');
  put(
    'roofline',
    roof,
    'ops[id=matvec].intensity',
    (2 * 4096 ** 2) / (2 * (4096 ** 2 + 2 * 4096)),
    '2d² / (2 bytes · (d² + 2d))',
  );
  put('roofline', roof, 'ops[id=add].intensity', 1 / 6, '1 FLOP / 3 × 2 bytes');
  put('roofline', roof, 'ops[id=gelu].intensity', 9 / 4, '9 FLOPs / 2 × 2 bytes');
  // Chapter 9: Llama 3 8B KV cache, 2 · L · n_kv · d · 2 bytes per token; weights in bf16; batch limit from the usable capacity.
  const l38 = preset('models', 'llama-3-8b').config;
  const n8 = params(l38).total;
  const perToken = 2 * l38.num_layers * l38.num_kv_heads * l38.head_dim * 2;
  for (const [context, batch] of [
    [2048, 1],
    [8192, 1],
    [32768, 1],
    [131072, 1],
    [8192, 16],
  ]) {
    const args = { model: 'llama-3-8b', context, batch, kv_dtype: 'bf16', hardware: 'h100-sxm' };
    const kv = perToken * context * batch;
    put('kv_cache', args, 'kv_cache_bytes', kv, '2 L n_kv d bytes tokens');
    put('kv_cache', args, 'mha_kv_cache_bytes', (kv * l38.num_heads) / l38.num_kv_heads, 'same with n_kv = a');
    put('kv_cache', args, 'weights_bytes', 2 * n8, 'N × 2');
    put('kv_cache', args, 'total_bytes', 2 * n8 + kv, 'weights + cache');
    put('kv_cache', args, 'usable_bytes', cap.usable, 'reported − 512 MiB − ceil(5 %)');
    put(
      'kv_cache',
      args,
      'max_batch',
      Math.floor((cap.usable - 2 * n8) / (perToken * context)),
      '(usable − weights) / cache per sequence',
    );
    put('kv_cache', args, 'decode_tokens_per_s_bound', bw / (2 * n8 + kv), 'bandwidth / bytes read per step');
    put(
      'kv_cache',
      args,
      'decode_batch_tokens_per_s_bound',
      (batch * bw) / (2 * n8 + kv),
      'batch × the per-sequence bound',
    );
  }
  // Errata: the seed's activation example with the sequence length restored: sbh(34 + 5as/h) per layer (dropout on).
  const seed = {
    vocab_size: 32000,
    hidden_size: 4096,
    num_layers: 24,
    num_heads: 16,
    mlp: 'gelu',
    norm: 'layernorm',
    position: 'rotary',
  };
  const [s, b, h, a] = [128, 512, 4096, 16];
  const perLayer = s * b * h * (34 + (5 * a * s) / h);
  const total = perLayer * 24 + s * b * h + 2 * 2 * s * b * h + 4 * s * b * 32000; // + embedding mask, final norm and LM head inputs, fp32 logits
  for (const reference of [undefined, 67.51e9]) {
    const args = {
      model: seed,
      seq: 128,
      micro_batch: 512,
      dropout: true,
      recompute: 'none',
      ...(reference ? { reference_bytes: reference } : {}),
    };
    put('memory_budget', args, 'activations.per_layer_bytes', perLayer, 'Korthikanti et al. 2022 eq. 2');
    put('memory_budget', args, 'activations.total_bytes', total, 'L layers + outside terms');
    if (reference)
      put('memory_budget', args, 'reference.activations_ratio', total / reference, 'against the printed 67.51 GB');
  }
  assert.ok(total / 67.51e9 > 3.6 && total / 67.51e9 < 3.7, 'a factor 3.6, not "more than a hundred"');
  put('params', { model: seed }, 'total', params(seed).total, 'architecture count');
  // Errata: Llama 2 7B at 4,096 tokens, trained without dropout (config.json), one micro-batch.
  for (const recompute of ['none', 'full', 'selective'])
    put(
      'memory_budget',
      { model: 'llama-2-7b', seq: 4096, micro_batch: 1, recompute },
      'activations.total_bytes',
      llamaActivations(l27, 4096, 1, recompute),
      `Llama layer terms, recompute ${recompute}`,
    );
  const fwd = forwardPerToken(l27, 4096);
  put(
    'flops',
    { model: 'llama-2-7b', seq: 4096, recompute: 'full' },
    'model_flops',
    3 * fwd.total,
    '3 × forward per token',
  );
  put(
    'flops',
    { model: 'llama-2-7b', seq: 4096, recompute: 'full' },
    'exact',
    3 * fwd.total + fwd.total - 2 * l27.hidden_size * l27.vocab_size,
    '+ one forward of the layers (not the LM head)',
  );
  put(
    'flops',
    { model: 'llama-2-7b', seq: 4096, recompute: 'selective' },
    'exact',
    3 * fwd.total + 2 * fwd.scores,
    '+ Q·Kᵀ and attention·V again',
  );
  // Chapters 1, 3, 4, 5 (worked problems and seed topics added by issue 15).
  for (const [shape, dtype, bytes] of [
    [[128256, 4096], 'bf16', 2],
    [[4, 8, 16], 'fp32', 4],
    [[8, 4096], 'int32', 4],
  ]) {
    const elements = shape.reduce((x, y) => x * y, 1);
    put('tensor_bytes', { shape, dtype }, 'bytes', elements * bytes, 'elements × bytes per element');
    put('tensor_bytes', { shape, dtype }, 'elements', elements, 'product of the shape');
  }
  const PF_DAY = 1e15 * 86400; // one petaFLOP/s sustained for a day
  put('compute_units', { flops: 3.14e23 }, 'flops', 3.14e23, 'given');
  put('compute_units', { flops: 3.14e23 }, 'petaflop_s_days', 3.14e23 / PF_DAY, 'FLOPs / 8.64e19');
  assert.ok(
    Math.abs(3.14e23 / PF_DAY / 3640 - 1) < 0.01,
    'GPT-3: about 3,640 PF/s-days (Brown et al. 2020, table D.1)',
  );
  put('compute_units', { params: 70e9, tokens: 15e12 }, 'flops', 6 * 70e9 * 15e12, '6ND');
  put(
    'compute_units',
    { params: 70e9, tokens: 15e12 },
    'petaflop_s_days',
    (6 * 70e9 * 15e12) / PF_DAY,
    '6ND / 8.64e19',
  );
  const unitArgs = { params: 70e9, tokens: 15e12, hardware: 'h100-sxm', mfu: 0.4, days: 30 };
  const gpuDays = (6 * 70e9 * 15e12) / (peak * 0.4) / 86400;
  put('compute_units', unitArgs, 'gpu_seconds', gpuDays * 86400, '6ND / (peak · MFU)');
  put('compute_units', unitArgs, 'gpus_for_days', Math.ceil(gpuDays / 30), 'GPU-days / 30, rounded up');
  const small = { params: 1e9, tokens: 100e9, hardware: 'h100-sxm', gpus: 8, mfu: 0.4 };
  const smallDays = (6 * 1e9 * 100e9) / (8 * peak * 0.4) / 86400;
  put('training_cost', small, 'six_nd', 6e20, '6ND');
  put('training_cost', small, 'seconds', smallDays * 86400, '6ND / (GPUs · peak · MFU)');
  put('training_cost', small, 'gpu_seconds', smallDays * 86400 * 8, 'seconds × GPUs');
  // Errata: the "1e15 useful FLOP/s per GPU" lesson's 1B-on-100B example on one H100 at 40 % MFU, and the
  // Chinchilla table 3 row for 67B (1.5T tokens) by 6ND; 1e15 is above the H100's dense peak.
  const oneGpu = { params: 1e9, tokens: 100e9, hardware: 'h100-sxm', gpus: 1, mfu: 0.4 };
  put('training_cost', oneGpu, 'seconds', 6e20 / (peak * 0.4), '6ND / (peak · MFU)');
  assert.ok(1e15 > peak && 6e20 / (peak * 0.4) > 2 * (6e20 / 1e15), 'over twice the "roughly a week"');
  put('compute_units', { params: 67e9, tokens: 1.5e12 }, 'flops', 6 * 67e9 * 1.5e12, '6ND');
  assert.ok(Math.abs((6 * 67e9 * 1.5e12) / 5.76e23 - 1.05) < 0.01, 'the page says 5% more than 5.76e23');
  for (const [m, k, n] of [
    [1, 8192, 8192],
    [128, 8192, 8192],
    [1024, 8192, 8192],
    [2048, 4096, 4096],
    [4096, 4096, 14336],
    [8192, 8192, 8192],
    [8192, 8192, 28672], // the running example's MLP up-projection (chapter 5's box)
  ]) {
    const args = { m, k, n, hardware: 'h100-sxm' };
    const flops = 2 * m * n * k,
      bytes = 2 * (m * k + k * n + m * n);
    put('matmul_roofline', args, 'flops', flops, '2mnk');
    put('matmul_roofline', args, 'intensity', flops / bytes, '2mnk / (2 bytes · (mk + kn + mn))');
    put('matmul_roofline', args, 'seconds', Math.max(flops / peak, bytes / bw), 'max(FLOPs / peak, bytes / bandwidth)');
    put(
      'matmul_roofline',
      args,
      'bound',
      flops / bytes >= peak / bw ? 'compute' : 'memory',
      'intensity against the ridge',
    );
    put('matmul_roofline', args, 'ridge_flops_per_byte', peak / bw, 'peak / bandwidth');
  }
  const l370 = preset('models', 'llama-3-70b').config;
  const n70 = params(l370).total;
  const kv70 = 2 * l370.num_layers * l370.num_kv_heads * l370.head_dim * 2 * 32768 * 8;
  put(
    'kv_cache',
    { model: 'llama-3-70b', context: 32768, batch: 8, kv_dtype: 'bf16' },
    'kv_cache_bytes',
    kv70,
    '2 L n_kv d bytes tokens batch',
  );
  put(
    'kv_cache',
    { model: 'llama-3-70b', context: 32768, batch: 8, kv_dtype: 'bf16' },
    'weights_bytes',
    2 * params(l370).total,
    'N × 2',
  );
  // Chapter 7 problem: Llama 3 8B at 32k tokens, with and without FlashAttention.
  for (const flash of [false, true])
    put(
      'memory_budget',
      { model: 'llama-3-8b', seq: 32768, micro_batch: 1, recompute: 'none', flash_attention: flash },
      'activations.total_bytes',
      llamaActivations(l38, 32768, 1, 'none', flash),
      `Llama layer terms, ${flash ? 'log-sum-exp instead of' : 'with'} the s² scores`,
    );
  // Chapter 8: Llama 3 70B per GPU on 64 GPUs: 16 bytes per parameter (2 + 2 + 4 + 8) whole or split 64 ways
  // by ZeRO-3 (Rajbhandari et al. 2020, fig. 1), plus one micro-batch's activations (selective, FlashAttention).
  const act70 = llamaActivations(l370, 4096, 1, 'selective', true);
  for (const zero of [0, 3]) {
    const args = {
      model: 'llama-3-70b',
      hardware: 'h100-sxm',
      gpus: 64,
      zero,
      seq: 4096,
      micro_batch: 1,
      recompute: 'selective',
      flash_attention: true,
    };
    put(
      'memory_budget',
      args,
      'per_gpu_bytes.total',
      (zero ? (16 * n70) / 64 : 16 * n70) + act70,
      zero ? '16N / 64 + activations' : '16N + activations',
    );
  }
  // Chapter 8 problem 2: with selective recomputation one micro-batch's activations alone exceed the usable bytes;
  // full recomputation keeps each layer's input (2sbh) plus one layer's activations (Korthikanti et al. 2022, sec. 5).
  const act70Args = {
    model: 'llama-3-70b',
    hardware: 'h100-sxm',
    gpus: 64,
    zero: 3,
    seq: 4096,
    micro_batch: 1,
    recompute: 'selective',
    flash_attention: true,
  };
  put('memory_budget', act70Args, 'activations.total_bytes', act70, 'Llama layer terms, selective');
  assert.ok(act70 > cap.usable, 'the page says the activations alone exceed the usable memory');
  const full70Args = { ...act70Args, gpus: 16, recompute: 'full' };
  put(
    'memory_budget',
    full70Args,
    'activations.total_bytes',
    llamaActivations(l370, 4096, 1, 'full', true),
    'layer inputs + one layer + outside',
  );
  const full70Fit = {
    mode: 'min_gpus',
    model: 'llama-3-70b',
    hardware: 'h100-sxm',
    zero: 3,
    seq: 4096,
    micro_batch: 1,
    recompute: 'full',
    flash_attention: true,
  };
  put('fit', full70Fit, 'min_gpus', native('fit', full70Fit).min_gpus, 'native CLI: tally call fit');
  // Why TP 8 with and without SP need the same count: per-GPU totals at 16 and 24 GPUs.
  for (const gpus of [16, 24])
    for (const sp of [true, false]) {
      const args = {
        model: 'llama-3-70b',
        hardware: 'h100-sxm',
        gpus,
        tp: 8,
        zero: 3,
        ...(sp ? { sequence_parallel: true } : {}),
        seq: 4096,
        micro_batch: 1,
        recompute: 'selective',
        flash_attention: true,
      };
      const total = native('memory_budget', args).per_gpu_bytes.total;
      put('memory_budget', args, 'per_gpu_bytes.total', total, 'native CLI: tally call memory_budget');
      assert.equal(total <= cap.usable, gpus === 24, `the page says ${gpus} GPUs ${gpus === 24 ? 'fit' : 'do not'}`);
    }
  // Chapter 8 problem: the fewest GPUs for 70B with ZeRO-3 and TP 8 is a search over GPU counts; the native CLI
  // runs it with the arguments written here (the per-GPU terms it sums are checked one by one above).
  for (const sp of [false, true]) {
    const args = {
      mode: 'min_gpus',
      model: 'llama-3-70b',
      hardware: 'h100-sxm',
      zero: 3,
      tp: 8,
      ...(sp ? { sequence_parallel: true } : {}),
      seq: 4096,
      micro_batch: 1,
      recompute: 'selective',
      flash_attention: true,
    };
    put('fit', args, 'min_gpus', native('fit', args).min_gpus, 'native CLI: tally call fit');
    assert.equal(native('fit', args).min_gpus, 24, 'the page explains one count for both, 24 (16 do not fit)');
  }
  // Chapter 8b problems: Llama 3 70B at 8,192 tokens on 64 H100s. The step model's component times come from the
  // native CLI (tally call step_time, the same engine built natively); what follows from them is computed here.
  const layout = (tp, pp, batch) => ({
    model: 'llama-3-70b',
    hardware: 'h100-sxm',
    gpus: 64,
    tp,
    pp,
    micro_batch: 1,
    global_batch: batch,
    seq: 8192,
    zero: 1,
    recompute: 'none',
    sequence_parallel: true,
    flash_attention: true,
  });
  const small44 = layout(4, 4, 64),
    step44 = native('step_time', small44);
  const micro = 64 / (64 / (4 * 4)) / 1; // global batch / (data-parallel replicas × micro-batch)
  // Chapter 8, pipeline schedules (p = 4, m = 8, backward = 2 forwards): Narayanan et al. 2021 eqs. (1)-(2) for the
  // bubble; in flight: GPipe all m, 1F1B p, interleaved Megatron's warm-up 2(p − 1) + (v − 1)p chunks plus one.
  const sched = (schedule, extra = {}) => ({ schedule, stages: 4, microbatches: 8, ...extra });
  put('pipeline_schedule', sched('gpipe'), 'bubble_ratio', 3 / 8, 'GPipe: (p − 1)/m');
  put('pipeline_schedule', sched('gpipe'), 'peak_in_flight', 8, 'GPipe: every micro-batch before the first backward');
  put('pipeline_schedule', sched('1f1b'), 'bubble_ratio', 3 / 8, '1F1B: (p − 1)/m');
  put('pipeline_schedule', sched('1f1b'), 'peak_in_flight', 4, '1F1B: p');
  // Chapter 8 problem 3: one bubble as a share of the step, (p − 1)/(m + p − 1), and as a ratio to the compute.
  for (const m of [32, 64])
    put(
      'pipeline_schedule',
      { schedule: '1f1b', stages: 8, microbatches: m },
      'idle_fraction',
      7 / (m + 7),
      '1F1B: (p − 1)/(m + p − 1)',
    );
  put('pipeline_schedule', sched('interleaved', { chunks: 2 }), 'bubble_ratio', 3 / 16, 'interleaved: (p − 1)/(v·m)');
  put(
    'pipeline_schedule',
    sched('interleaved', { chunks: 2 }),
    'peak_in_flight',
    4 + 3 / 2,
    '(2(p − 1) + (v − 1)p + 1)/v',
  );
  // Zero bubble and DualPipe (F = 1, B = 2 the whole backward, W = 1 its weight part): idle time per GPU
  // (p − 1)(F + B − 2W) for ZB-H1 (Qi et al. 2024 sec. 2.1), (p/2 − 1)(F&B + B − 3W) with F&B = F + B for DualPipe
  // (DualPipe README's table, which also gives p + 1 in flight and 2× parameters); compute m(F + B) per GPU.
  const [F, B, Wt] = [1, 2, 1];
  const pipeIdle = {
    '1f1b': (p) => (p - 1) * (F + B),
    'zb-h1': (p) => (p - 1) * (F + B - 2 * Wt),
    dualpipe: (p) => (p / 2 - 1) * (F + B + B - 3 * Wt),
  };
  for (const [p, m] of [
    [4, 8],
    [8, 32],
  ]) {
    const args = (schedule) => ({ schedule, stages: p, microbatches: m });
    for (const [schedule, idle] of Object.entries(pipeIdle)) {
      put('pipeline_schedule', args(schedule), 'bubble_time', idle(p), `idle per GPU, ${schedule}`);
      put('pipeline_schedule', args(schedule), 'bubble_ratio', idle(p) / (m * (F + B)), 'idle / m(F + B)');
    }
    put('pipeline_schedule', args('zb-h1'), 'peak_in_flight', p, 'ZB-H1: as 1F1B, p');
    put('pipeline_schedule', args('dualpipe'), 'peak_in_flight', p + 1, 'DualPipe: p + 1');
    put('pipeline_schedule', args('dualpipe'), 'parameter_copies', 2, 'DualPipe: two stages per GPU');
  }
  put('step_time', small44, 'microbatches', micro, 'global batch / (dp · micro-batch)');
  put('step_time', small44, 'bubble_fraction', (4 - 1) / micro, '1F1B: (p − 1) / m (Narayanan et al. 2021, sec. 2.2)');
  put('step_time', small44, 'microbatch_seconds', step44.microbatch_seconds, 'native CLI');
  put(
    'step_time',
    small44,
    'breakdown[id=bubble].seconds',
    (4 - 1) * step44.microbatch_seconds,
    '(p − 1) idle micro-batch slots',
  );
  put('step_time', small44, 'step_seconds', step44.step_seconds, 'native CLI');
  const wide44 = layout(4, 4, 512),
    wide82 = layout(8, 2, 512);
  const run44 = native('step_time', wide44),
    run82 = native('step_time', wide82);
  const modelFlopsPerGpu = (3 * forwardPerToken(l370, 8192).total * 512 * 8192) / 64; // training = 3 × forward, no recomputation
  put('step_time', wide44, 'step_seconds', run44.step_seconds, 'native CLI');
  put(
    'step_time',
    wide44,
    'model_flops_per_s_per_gpu',
    modelFlopsPerGpu / run44.step_seconds,
    'model FLOPs per GPU / step time',
  );
  put(
    'step_time',
    wide44,
    'mfu',
    modelFlopsPerGpu / run44.step_seconds / peak,
    'model FLOPs per GPU / (step time · peak)',
  );
  put('step_time', wide44, 'tokens_per_second', (512 * 8192) / run44.step_seconds, 'global batch · seq / step time');
  put(
    'step_time',
    wide44,
    'breakdown[id=bubble].seconds',
    (4 - 1) * run44.microbatch_seconds,
    '(p − 1) idle micro-batch slots',
  );
  put(
    'step_time',
    wide44,
    'breakdown[id=tp_comm].seconds',
    run44.breakdown.find((b) => b.id === 'tp_comm').seconds,
    'native CLI',
  );
  put(
    'step_time',
    wide82,
    'mfu',
    modelFlopsPerGpu / run82.step_seconds / peak,
    'model FLOPs per GPU / (step time · peak)',
  );
  put(
    'step_time',
    wide82,
    'breakdown[id=bubble].seconds',
    (2 - 1) * run82.microbatch_seconds,
    '(p − 1) idle micro-batch slots',
  );
  put(
    'step_time',
    wide82,
    'breakdown[id=tp_comm].seconds',
    run82.breakdown.find((b) => b.id === 'tp_comm').seconds,
    'native CLI',
  );
  assert.ok(run44.mfu > run82.mfu, 'the page says TP 4 × PP 4 beats TP 8 × PP 2');
  // Chapter 8b: full recomputation. MFU credits only the model's FLOPs, HFU the recomputed forward too.
  const full44 = { ...wide44, recompute: 'full' },
    runFull = native('step_time', full44);
  put('step_time', wide44, 'hfu', run44.hfu, 'native CLI');
  put('step_time', full44, 'hfu', runFull.hfu, 'native CLI');
  put(
    'step_time',
    full44,
    'mfu',
    modelFlopsPerGpu / runFull.step_seconds / peak,
    'model FLOPs per GPU / (step time · peak)',
  );
  assert.ok(runFull.mfu < run44.mfu - 0.1, 'the page says MFU falls with full recomputation');
  assert.ok(Math.abs(runFull.hfu - run44.hfu) < 0.01, 'the page says HFU barely moves');
  // Problem 3: two chunks per stage would not fit, which is why the planner's best is not interleaved.
  const chunks2 = { ...wide44, interleave: 2 },
    run2 = native('step_time', chunks2);
  put('step_time', chunks2, 'memory_bytes', run2.memory_bytes, 'native CLI');
  assert.equal(run2.fits, false, 'the page says two chunks per stage do not fit');
  assert.ok(run2.memory_bytes > usable('h100-sxm').usable, 'more than an H100 has');
  // Chapter 8b's account of the validation (`tally step --validate`): 17 runs, a median error of 5 % (in-sample),
  // nine predicted below what they reached, the largest Megatron-LM 2022 runs by 8 to 9 %, Llama 3's by 2 and 7 %,
  // MT-NLG +22 to +28 %, BLOOM +17 %. Not a bound: errors of both signs.
  const validation = JSON.parse(execFileSync(nativeCli, ['step', '--validate', '--json'], { encoding: 'utf8' }));
  const pct = (e) => Math.round(100 * e);
  const errorsOf = (prefix) => validation.runs.filter((r) => r.id.startsWith(prefix)).map((r) => pct(r.error));
  assert.equal(validation.runs.length, 17, 'seventeen published runs');
  assert.equal(pct(validation.median_abs_error), 5, 'median error 5 %');
  assert.equal(validation.runs.filter((r) => r.error < 0).length, 9, 'nine runs reached more than predicted');
  assert.deepEqual(errorsOf('korthikanti-2022').slice(-2), [-9, -8], 'the largest Megatron-LM 2022 runs by 8 to 9 %');
  const mtnlg = errorsOf('mt-nlg');
  assert.deepEqual([Math.min(...mtnlg), Math.max(...mtnlg)], [22, 28], 'MT-NLG +22 to +28 %');
  assert.deepEqual(errorsOf('bloom'), [17], 'BLOOM +17 %');
  assert.deepEqual(errorsOf('llama3'), [-2, -7], "Llama 3's runs reached 2 and 7 % more");
  // Chapter 8b's held-out account: tally step --validate --runs content/validation/runs-modern.json (--json).
  const modernFile = path.join(root, 'content/validation/runs-modern.json');
  const modernRuns = JSON.parse(readFileSync(modernFile, 'utf8'));
  const modern = JSON.parse(
    execFileSync(nativeCli, ['step', '--validate', '--runs', modernFile, '--json'], { encoding: 'utf8' }),
  );
  const fit = modern.halves.fit,
    held = modern.halves.heldout;
  const one = (x) => Math.round(1000 * x) / 10; // a share in percent to one decimal
  assert.equal(modernRuns.runs.length, 163, '163 published runs');
  assert.equal(new Set(modernRuns.runs.map((r) => r.source_key)).size, 10, 'ten independent sources');
  const halfOf = (key) => modernRuns.split[key];
  for (const key of ['mosaicml-llm-foundry', 'nvidia-megatron-bridge', 'nvidia-megatron-core-r0.8'])
    assert.equal(halfOf(key), 'fit', `${key} in the fitting half`);
  for (const key of [
    'pytorch-torchtitan',
    'trainy-whitefiber',
    'meta-llama3-paper',
    'hf-nanotron',
    'ibm-fms-fsdp',
    'google-maxtext',
    'meta-opt',
  ])
    assert.equal(halfOf(key), 'heldout', `${key} held out`);
  assert.deepEqual([fit.count, one(fit.median_abs_error)], [81, 7], 'fit half');
  assert.deepEqual(
    [held.count, held.skipped_not_expressible, one(held.median_abs_error), pct(held.within_20_percent)],
    [78, 4, 9.3, 85],
    'held-out: 78 expressible, 4 not, 9.3 %, 85 % within 20 %',
  );
  const heldRuns = modern.runs.filter((r) => r.half === 'heldout');
  assert.equal(heldRuns.filter((r) => Math.abs(r.error) > 0.5).length, 2, '2 held-out runs off by more than half');
  // First contact (BENCHMARKS.md): the last three sources as the model stood when they were added, 16.0 %, 6 of 8.
  const contact = JSON.parse(
    readFileSync(path.join(root, 'content/validation/first-contact/issue35-validate.json'), 'utf8'),
  );
  const contactErrors = contact.runs.map((r) => Math.abs(r.error)).sort((x, y) => x - y);
  const mid = contactErrors.length / 2;
  assert.equal(contactErrors.length, 8, 'eight first-contact runs');
  assert.equal(one((contactErrors[mid - 1] + contactErrors[mid]) / 2), 16.0, 'first contact 16.0 %');
  assert.equal(contactErrors.filter((e) => e <= 0.2).length, 6, 'six of eight within 20 %');
  // Bands checked against the other sources' runs only.
  assert.deepEqual(
    [
      pct(modern.band_coverage.inside_leave_one_source_out_band),
      pct(modern.band_coverage.generic_inside_leave_one_source_out_band),
    ],
    [91, 73],
    "91 % inside the other sources' band as given, 73 % as generic",
  );
  // Problem 5: nanotron's 3.57B on 512 GPUs, overhead-bound, inside the band the other sources give it.
  const n357 = modern.runs.find((r) => r.id === 'nanotron-3p57b-512gpu');
  assert.deepEqual([one(n357.published), one(n357.predicted)], [10.5, 12.5], 'problem 5: 10.5 % published, 12.5 %');
  assert.equal(pct(0.125 / 0.105 - 1), 19, "problem 5's answer from the rounded figures");
  assert.equal(n357.regime, 'overhead-bound');
  assert.deepEqual(
    [n357.band.level, pct(n357.band.lower), pct(n357.band.upper), n357.band.inside],
    ['any stack/regime', -33, 37, true],
    'problem 5: the other sources give it -33 % to +37 %, and it lies inside',
  );
  // The widget default's band: generic on H100s, the runs predicted as generic (the any-stack levels).
  assert.match(run44.band.level, /^any stack/);
  put('step_time', wide44, 'band.lower', run44.band.lower, 'the stored band (step-bands.test.mjs checks it)');
  put('step_time', wide44, 'band.upper', run44.band.upper, 'the stored band');
  put('step_time', wide44, 'band.runs', run44.band.runs, 'the stored band');
  put('step_time', wide44, 'tokens_per_second', (512 * 8192) / run44.step_seconds, 'global batch · seq / step time');
  put(
    'step_time',
    wide44,
    'band.tokens_per_second_low',
    run44.tokens_per_second / (1 + run44.band.upper),
    'tokens/s ÷ (1 + upper)',
  );
  put(
    'step_time',
    wide44,
    'band.tokens_per_second_high',
    run44.tokens_per_second / (1 + run44.band.lower),
    'tokens/s ÷ (1 + lower)',
  );
  // Problem 6: megatron-te with TP communication overlap hides the same sequence-parallel collectives and runs
  // fused attention.
  const te44 = { ...wide44, stack: 'megatron-te', tp_comm_overlap: true },
    runTe = native('step_time', te44);
  const partOf = (r, id) => r.breakdown.find((b) => b.id === id).seconds;
  put(
    'step_time',
    te44,
    'mfu',
    modelFlopsPerGpu / runTe.step_seconds / peak,
    'model FLOPs per GPU / (step time · peak)',
  );
  put(
    'step_time',
    te44,
    'breakdown[id=tp_comm_hidden].seconds',
    partOf(run44, 'tp_comm'),
    'the same collectives, hidden',
  );
  put('step_time', wide44, 'breakdown[id=matmul].seconds', partOf(run44, 'matmul'), 'native CLI');
  put('step_time', te44, 'breakdown[id=matmul].seconds', partOf(runTe, 'matmul'), 'native CLI');
  put('step_time', te44, 'band.lower', runTe.band.lower, 'the stored band');
  put('step_time', te44, 'band.upper', runTe.band.upper, 'the stored band');
  assert.ok(runTe.band.key.startsWith('megatron-te / '), 'problem 6: the band of Megatron runs');
  assert.ok(runTe.mfu > run44.mfu && partOf(runTe, 'matmul') < partOf(run44, 'matmul'), 'the page says both move');
  assert.equal(partOf(runTe, 'tp_comm'), 0, 'nothing of the TP collectives stays exposed');
  const planArgs = { ...PLANNER_EXAMPLE, top: 1 },
    planArgs2 = { ...PLANNER_EXAMPLE, top: 2 };
  const [best, second] = native('plan', planArgs2).best;
  assert.deepEqual(
    [best.layout.tp, best.layout.pp, best.layout.zero, best.layout.dp],
    [4, 4, 1, 4],
    "the page says the planner's best is the widget's TP 4 x PP 4",
  );
  assert.equal(best.mfu, run44.mfu, 'the same layout as the widget');
  assert.deepEqual(
    [second.layout.tp, second.layout.pp, second.layout.zero, second.layout.dp],
    [4, 1, 3, 16],
    'the page says the runner-up is TP 4, no pipeline, ZeRO-3 over 16 replicas',
  );
  const zero3 = { ...wide44, pp: 1, zero: 3 },
    runZ = native('step_time', zero3);
  assert.equal(runZ.mfu, second.mfu, 'the same layout as the runner-up');
  const contention = runZ.breakdown.find((b) => b.id === 'overlap_contention').seconds;
  assert.ok(contention > partOf(run44, 'bubble'), 'the contention costs more than the bubble it saves');
  put('step_time', zero3, 'breakdown[id=overlap_contention].seconds', contention, 'native CLI');
  put('plan', planArgs2, 'best.1.mfu', second.mfu, 'native CLI');
  // FSDP prefetch (overlap.cpp's timeline): each micro-batch waits only for its first gather and last reduce-scatter.
  const z3Exposed = runZ.breakdown.find((b) => b.id === 'zero3_comm').seconds,
    z3Hidden = runZ.breakdown.find((b) => b.id === 'zero3_comm_hidden').seconds;
  assert.ok(z3Exposed > 0 && z3Exposed < 0.05 * z3Hidden, 'ZeRO-3: a small share exposed');
  put('step_time', zero3, 'breakdown[id=zero3_comm].seconds', z3Exposed, 'native CLI');
  assert.equal(runZ.breakdown.find((b) => b.id === 'bubble').seconds, 0, 'no bubble without stages');
  put(
    'step_time',
    zero3,
    'breakdown[id=zero3_comm_hidden].seconds',
    runZ.breakdown.find((b) => b.id === 'zero3_comm_hidden').seconds,
    'native CLI',
  );
  put('step_time', zero3, 'memory_bytes', runZ.memory_bytes, 'native CLI');
  assert.ok(
    (best.mfu - second.mfu) / second.mfu < run44.band.upper - run44.band.lower,
    'the two MFUs differ by less than the band',
  );
  put('plan', planArgs, 'best.0.mfu', best.mfu, 'native CLI');
  // Chapter 9: serving Llama 3 8B on an H100 (bf16 weights and cache). A decode step reads the weights and every
  // cache once and computes one token per sequence; its time is the larger of the two (Williams et al. 2009).
  const serve = (context, batch = 1) => {
    const kvSequence = perToken * context,
      weights = 2 * n8;
    const decodeFlops = forwardPerToken(l38, context).total,
      prefillFlops = forwardPerToken(l38, context, true).total;
    const memory = (weights + batch * kvSequence) / bw,
      compute = (batch * decodeFlops) / peak,
      step = Math.max(memory, compute);
    return {
      kvSequence,
      prefillFlops,
      prefillRate: peak / prefillFlops,
      prefillSeconds: (context * prefillFlops) / peak,
      bound: memory >= compute ? 'memory' : 'compute',
      tokensPerS: batch / step,
      stepSeconds: step,
      crossover: Math.ceil(weights / bw / (decodeFlops / peak - kvSequence / bw)),
    };
  };
  const at8k = serve(8192),
    args8k = { model: 'llama-3-8b', context: 8192, hardware: 'h100-sxm' };
  put('inference', args8k, 'kv_bytes_per_sequence', at8k.kvSequence, '2 L n_kv d bytes × context');
  put('inference', args8k, 'prefill_flops_per_token', at8k.prefillFlops, 'forward per token, causal attention');
  put('inference', args8k, 'prefill_tokens_per_s', at8k.prefillRate, 'peak / prefill FLOPs per token');
  put('inference', args8k, 'prefill_seconds', at8k.prefillSeconds, 'context / prefill rate');
  put(
    'inference',
    args8k,
    'decode.step_seconds',
    at8k.stepSeconds,
    'max(memory, compute) time of a step, one token per sequence',
  );
  for (const context of [128, 256])
    put(
      'inference',
      { model: 'llama-3-8b', context, hardware: 'h100-sxm' },
      'crossover_batch_whole',
      serve(context).crossover,
      '(W/bw) / (F/peak − kv/bw), rounded up',
    );
  put(
    'inference',
    { model: 'llama-3-8b', context: 128, hardware: 'h100-sxm' },
    'decode.tokens_per_s',
    serve(128).tokensPerS,
    'batch / step time',
  );
  const wide = { model: 'llama-3-8b', context: 128, hardware: 'h100-sxm', batch: 512 };
  put('inference', wide, 'decode.bound', serve(128, 512).bound, 'compute time against memory time');
  put('inference', wide, 'decode.tokens_per_s', serve(128, 512).tokensPerS, 'batch / step time');
  // Chapter 9, serving many users. Every figure below from the preset files: decode steps as above, max(memory,
  // compute) with bytes = weights + batch × cache (Williams et al. 2009), against the usable bytes (chapter 4's rule).
  const stepOf = (weights, kvSequence, flops, batch, hbm, flopsPerS) =>
    Math.max((weights + batch * kvSequence) / hbm, (batch * flops) / flopsPerS);
  const w8 = 2 * n8,
    room8 = cap.usable - w8;
  // Paged KV (Kwon et al. 2023): whole 16-token blocks (vLLM's default) of the tokens held, against a reservation
  // of the longest context; both batches read only the tokens held.
  for (const mean of [2000, 700]) {
    const args = { model: 'llama-3-8b', reserved_context: 8192, mean_context: mean, hardware: 'h100-sxm' };
    const used = perToken * mean,
      reserved = perToken * 8192,
      paged = perToken * Math.ceil(mean / 16) * 16;
    const nR = Math.floor(room8 / reserved),
      nP = Math.floor(room8 / paged);
    const flops = forwardPerToken(l38, mean).total;
    const tpsR = nR / stepOf(w8, used, flops, nR, bw, peak),
      tpsP = nP / stepOf(w8, used, flops, nP, bw, peak);
    put('paged_kv', args, 'reserved_bytes_per_sequence', reserved, '2 L n_kv d bytes × 8,192');
    put('paged_kv', args, 'paged_bytes_per_sequence', paged, 'ceil(mean / 16) blocks of 16 tokens');
    put('paged_kv', args, 'reserved_used_fraction', used / reserved, 'mean / reserved tokens');
    put('paged_kv', args, 'paged_used_fraction', used / paged, 'mean / tokens in whole blocks');
    put('paged_kv', args, 'reserved_sequences', nR, '(usable − weights) / reservation');
    put('paged_kv', args, 'paged_sequences', nP, '(usable − weights) / blocks');
    put('paged_kv', args, 'sequences_ratio', nP / nR, 'paged / reserved sequences');
    put('paged_kv', args, 'reserved_step.tokens_per_s', tpsR, 'batch / step time');
    put('paged_kv', args, 'paged_step.tokens_per_s', tpsP, 'batch / step time');
    put('paged_kv', args, 'throughput_ratio', tpsP / tpsR, 'paged / reserved tokens/s');
    put('paged_kv', args, 'blocks_per_sequence', Math.ceil(mean / 16), 'ceil(mean / 16)');
    put('paged_kv', args, 'paged_tokens_per_sequence', Math.ceil(mean / 16) * 16, 'whole blocks');
    assert.ok(tpsP / tpsR < nP / nR, 'the page says the rate rises less than the number of sequences');
  }
  // Speculative decoding (Leviathan et al. 2023, eq. 1 and sec. 3): E = Σ α^i for i = 0..γ; a round is γ draft
  // steps plus one target pass over γ + 1 tokens (one read of its weights and cache, γ + 1 tokens' FLOPs).
  const b200 = preset('hardware', 'b200'),
    b200Bw = b200.memory_bandwidth_tb_s * 1e12,
    b200Peak = b200.peak_tflops.bf16 * 1e12;
  const w70 = 2 * params(l370).total,
    kv70Token = 2 * l370.num_layers * l370.num_kv_heads * l370.head_dim * 2;
  const speedups = new Map();
  for (const [alpha, gamma] of [
    [0.8, 4],
    [0.6, 4],
    [0.6, 7],
  ]) {
    const args = {
      model: 'llama-3-70b',
      draft_model: 'llama-3-8b',
      context: 4096,
      acceptance_rate: alpha,
      draft_tokens: gamma,
      hardware: 'b200',
    };
    let expected = 0;
    for (let i = 0; i <= gamma; i++) expected += alpha ** i;
    const f70 = forwardPerToken(l370, 4096).total;
    const target = stepOf(w70, kv70Token * 4096, f70, 1, b200Bw, b200Peak);
    const draft = stepOf(w8, perToken * 4096, forwardPerToken(l38, 4096).total, 1, b200Bw, b200Peak);
    const verify = Math.max((w70 + kv70Token * 4096) / b200Bw, ((gamma + 1) * f70) / b200Peak);
    const tokensPerS = expected / (gamma * draft + verify);
    put('speculative_decoding', args, 'expected_tokens', expected, 'Σ α^i, i = 0..γ');
    put('speculative_decoding', args, 'speedup', tokensPerS * target, 'E / round time, over 1 / target step');
    speedups.set(`${alpha},${gamma}`, tokensPerS * target);
    assert.ok(w70 + w8 + (kv70Token + perToken) * 4096 <= usable('b200').usable, 'the page says both fit one B200');
    if (alpha === 0.8) {
      put('speculative_decoding', args, 'cost_ratio', draft / target, 'draft step / target step');
      put('speculative_decoding', args, 'baseline_tokens_per_s', 1 / target, 'one token per target step');
      put('speculative_decoding', args, 'tokens_per_s', tokensPerS, 'E / (γ draft steps + verification)');
    }
  }
  assert.ok(speedups.get('0.6,7') < speedups.get('0.6,4'), 'problem 8 says drafting 7 is worse than 4 at 0.6');
  assert.ok(w70 > cap.usable, "the page says Llama 3 70B's bf16 weights do not fit one H100");
  put('kv_cache', { model: 'llama-3-70b', context: 8192, batch: 16, kv_dtype: 'bf16' }, 'weights_bytes', w70, 'N × 2');
  // Tensor-parallel decoding (Shoeybi et al. 2019): 1/t of the weights and of the 8 KV heads per GPU, 2 all-reduces
  // per layer of batch × hidden × 2 bytes, each priced by the collective method of the communication chapter.
  for (const t of [8, 4]) {
    const args = { model: 'llama-3-70b', tp: t, context: 8192, batch: 16, hardware: 'h100-sxm' };
    const weightsPerGpu = Math.ceil(w70 / t),
      kvPerGpu = (kv70Token * 8192) / Math.min(t, l370.num_kv_heads);
    const memory = (weightsPerGpu + 16 * kvPerGpu) / bw,
      compute = (16 * forwardPerToken(l370, 8192).total) / t / peak;
    const bytes = 16 * l370.hidden_size * 2;
    const one = native('collective', {
      collective: 'all_reduce',
      message_bytes: bytes,
      ranks_per_node: t,
      nodes: 1,
      hardware: 'h100-sxm',
    }).seconds;
    const comm = 2 * l370.num_layers * one,
      step = Math.max(memory, compute) + comm;
    put('tp_serving', args, 'weights_bytes_per_gpu', weightsPerGpu, 'weights / t');
    put('tp_serving', args, 'memory_seconds', memory, '(weights + 16 caches) per GPU / bandwidth');
    put('tp_serving', args, 'all_reduces_per_step', 2 * l370.num_layers, '2 per layer');
    put('tp_serving', args, 'comm_seconds', comm, '2L × one all-reduce');
    put('tp_serving', args, 'step_seconds', step, 'max(memory, compute) + all-reduces');
    put('tp_serving', args, 'tokens_per_s', 16 / step, 'batch / step');
    put('tp_serving', args, 'comm_fraction', comm / step, 'all-reduces / step');
    put('tp_serving', args, 'kv_heads_per_gpu', Math.max(1, l370.num_kv_heads / t), 'n_kv / t, at least 1');
    if (t === 4) assert.ok(16 * kvPerGpu + weightsPerGpu <= cap.usable, 'problem 9 says the 16 sequences fit');
    if (t === 8) {
      put('tp_serving', args, 'kv_bytes_per_sequence_per_gpu', kvPerGpu, 'one sequence, one KV head of 8');
      put('tp_serving', args, 'all_reduce_bytes', bytes, 'batch × hidden × 2');
      put('tp_serving', args, 'all_reduce_seconds', one, 'the collective method, ring over 8 GPUs');
    } else {
      put(
        'tp_serving',
        args,
        'max_batch',
        Math.floor((cap.usable - weightsPerGpu) / kvPerGpu),
        '(usable − weights) / cache',
      );
    }
  }
  // Quantized weights: the step reads weights + batch × cache; FP8 stores a weight in 1 byte, NVFP4 in 4.5 bits
  // (a 4-bit value and an 8-bit scale per 16).
  const flops8k = forwardPerToken(l38, 8192).total,
    kv8k = perToken * 8192;
  for (const [dtype, quantized, batches] of [
    ['fp8', n8, [1, 16, 60]],
    ['nvfp4', (n8 * 4.5) / 8, [1, 16]],
  ])
    for (const batch of batches) {
      const args = { model: 'llama-3-8b', context: 8192, batch, quantized_dtype: dtype, hardware: 'h100-sxm' };
      const speedup = stepOf(w8, kv8k, flops8k, batch, bw, peak) / stepOf(quantized, kv8k, flops8k, batch, bw, peak);
      put('weight_quantization', args, 'speedup', speedup, 'bytes read before / after (memory-bound)');
      if (dtype === 'fp8')
        put('weight_quantization', args, 'weights_share', w8 / (w8 + batch * kv8k), 'W / (W + b kv)');
      if (batch === 60) {
        put('weight_quantization', args, 'max_batch', Math.floor(room8 / kv8k), '(usable − weights) / cache');
        put(
          'weight_quantization',
          args,
          'quantized_max_batch',
          Math.floor((cap.usable - quantized) / kv8k),
          'same, FP8 weights',
        );
      }
      if (dtype === 'nvfp4' && batch === 1) {
        put('weight_quantization', args, 'ideal_speedup', w8 / quantized, '16 / 4.5 bits');
        put('weight_quantization', args, 'quantized_weights_bytes', quantized, 'N × 4.5 / 8');
      }
    }
  // Chapter 9, latent attention and sliding windows: bytes per token from the preset files. MLA caches
  // L · (d_c + d_rope) values (DeepSeek-V2 sec. 2.1.2); windowed layers hold min(context, W) tokens.
  const ds = preset('models', 'deepseek-v3').config;
  const oss = preset('models', 'gpt-oss-120b').config;
  // DeepSeek-V3 counted by hand: MLA projections (q_a, q_b, kv_a, kv_b, o and two latent norms), 3 dense
  // SwiGLU layers, 58 MoE layers of 256 routed + 1 shared experts with a router and its bias, untied head.
  const dsAttention =
    ds.hidden_size * ds.q_lora_rank +
    ds.q_lora_rank +
    ds.q_lora_rank * ds.num_heads * ds.head_dim +
    ds.hidden_size * (ds.kv_lora_rank + ds.qk_rope_head_dim) +
    ds.kv_lora_rank +
    ds.kv_lora_rank * ds.num_heads * (ds.head_dim - ds.qk_rope_head_dim + ds.v_head_dim) +
    ds.num_heads * ds.v_head_dim * ds.hidden_size;
  const dsExpert = 3 * ds.hidden_size * ds.ffn_hidden_size;
  const dsParams =
    2 * ds.vocab_size * ds.hidden_size +
    ds.num_layers * (dsAttention + 2 * ds.hidden_size) +
    ds.hidden_size +
    ds.num_dense_layers * 3 * ds.hidden_size * ds.dense_ffn_hidden_size +
    (ds.num_layers - ds.num_dense_layers) *
      ((ds.num_experts + ds.num_shared_experts) * dsExpert + ds.num_experts * (ds.hidden_size + 1));
  assert.equal(Math.round(dsParams / 1e9), 671, 'DeepSeek-V3 report: 671B total parameters');
  const dsValues = ds.num_layers * (ds.kv_lora_rank + ds.qk_rope_head_dim);
  const dsMha = ds.num_layers * ds.num_heads * (ds.head_dim + ds.v_head_dim);
  const ossLayer = 2 * oss.num_kv_heads * oss.head_dim * 2; // K and V of one layer, bf16
  const ossFull = (oss.num_layers - oss.num_sliding_layers) * ossLayer;
  const ossCache = (context) =>
    ossFull * context + oss.num_sliding_layers * ossLayer * Math.min(context, oss.sliding_window);
  const l70PerToken = 2 * l370.num_layers * l370.num_kv_heads * l370.head_dim * 2;
  const kvArgs = (model, context, batch = 1, kv_dtype = 'bf16') => ({ model, context, batch, kv_dtype });
  const C = 131072;
  put('kv_cache', kvArgs('llama-3-70b', C), 'bytes_per_token', l70PerToken, '2 L n_kv d bytes');
  put('kv_cache', kvArgs('llama-3-70b', C), 'kv_cache_bytes', l70PerToken * C, '2 L n_kv d bytes × context');
  put(
    'kv_cache',
    kvArgs('llama-3-70b', C),
    'mha_kv_cache_bytes',
    (l70PerToken * C * l370.num_heads) / l370.num_kv_heads,
    'same with n_kv = a',
  );
  put('kv_cache', kvArgs('deepseek-v3', C), 'bytes_per_token', 2 * dsValues, 'L (d_c + d_rope) × 2 bytes');
  put('kv_cache', kvArgs('deepseek-v3', C), 'kv_cache_bytes', 2 * dsValues * C, 'L (d_c + d_rope) × 2 bytes × context');
  put('kv_cache', kvArgs('deepseek-v3', C), 'mha_kv_cache_bytes', 2 * dsMha * C, 'L a (d + d_v) × 2 bytes × context');
  put('kv_cache', kvArgs('deepseek-v3', C), 'weights_bytes', 2 * dsParams, 'N × 2 (MLA + MoE counted above)');
  put(
    'kv_cache',
    kvArgs('deepseek-v3', 32768, 8),
    'kv_cache_bytes',
    2 * dsValues * 32768 * 8,
    'L (d_c + d_rope) × 2 × tokens × batch',
  );
  put('kv_cache', kvArgs('deepseek-v3', 32768, 8), 'weights_bytes', 2 * dsParams, 'N × 2');
  // NVFP4: 4 bits a value plus one 8-bit scale per 16 values = 4.5 bits (NVIDIA's NVFP4 format).
  put(
    'kv_cache',
    kvArgs('deepseek-v3', C, 1, 'nvfp4'),
    'kv_cache_bytes',
    ((dsValues * 4.5) / 8) * C,
    'values × 4.5 bits × context',
  );
  put(
    'kv_cache',
    kvArgs('gpt-oss-120b', C),
    'bytes_per_token',
    oss.num_layers * ossLayer,
    'every layer below the window',
  );
  for (const context of [65536, C]) {
    put('kv_cache', kvArgs('gpt-oss-120b', context), 'global_bytes_per_token', ossFull, 'the full layers only');
    put(
      'kv_cache',
      kvArgs('gpt-oss-120b', context),
      'kv_cache_bytes',
      ossCache(context),
      'full layers × context + windowed × W',
    );
  }
  put(
    'kv_cache',
    kvArgs('gpt-oss-120b', C),
    'mha_kv_cache_bytes',
    (ossCache(C) * oss.num_heads) / oss.num_kv_heads,
    'same with a K/V head per query head',
  );
  assert.equal(ossCache(C), 4_836_556_800, "18 · 2048 B · (131,072 + 128), the problem's arithmetic");
  assert.equal(2 * dsValues * 32768 * 8, 18_421_383_168, "problem 4's arithmetic");
  assert.equal(((dsValues * 4.5) / 8) * C, 2_590_507_008, "problem 6's arithmetic");
  // Chapter 2 (exponent bias, subnormals): IEEE 754-2019 biases 2^(e−1) − 1; OCP FP8 E5M2 bias 15.
  for (const [name, bias] of [
    ['fp32', 127],
    ['fp16', 15],
    ['e5m2', 15],
    ['e4m3', 7],
    ['e4m3fnuz', 8], // the FNUZ variants' bias is one larger (AMD/Graphcore 8-bit formats, 2022)
  ])
    put('float_formats', {}, `formats[name=${name}].bias`, bias, '2^(exponent bits − 1) − 1');
  put(
    'float_formats',
    {},
    'formats[name=fp16].constants.min_subnormal.value',
    2 ** -24,
    '2^(1 − bias − mantissa bits)',
  );
  put(
    'roofline',
    { hardware: 'h100-sxm', dtype: 'fp8' },
    'peak_flops_per_s',
    h100.peak_tflops.fp8 * 1e12,
    'preset dense fp8 peak',
  );
  const a100 = preset('hardware', 'a100-80gb');
  put(
    'roofline',
    { hardware: 'a100-80gb', dtype: 'bf16' },
    'ridge_flops_per_byte',
    (a100.peak_tflops.bf16 * 1e12) / (a100.memory_bandwidth_tb_s * 1e12),
    'peak / bandwidth',
  );
  // Chapter 5 problem 2 says the A100 needs about half the H100's tokens in flight; chapter 9 that the decode
  // crossover falls towards the H100's ridge as the context shrinks, and stays above it.
  const ridgeRatio = peak / bw / ((a100.peak_tflops.bf16 * 1e12) / (a100.memory_bandwidth_tb_s * 1e12));
  assert.ok(ridgeRatio > 1.8 && ridgeRatio < 2.2, `H100 ridge / A100 ridge = ${ridgeRatio}: "about half as many"`);
  assert.ok(serve(128).crossover > 1.3 * (peak / bw), 'the 128-token crossover is well above the ridge');
  assert.ok(serve(256).crossover > serve(128).crossover, 'the crossover falls as the context shrinks');
  const mixed = { model: 'llama-2-7b', recipe: 'bf16_mixed_adamw', seq: 1 };
  put('memory_budget', mixed, 'bytes_per_param.total', 16, '2 + 2 + 4 + 8');
  put('memory_budget', mixed, 'per_gpu_bytes.weights', 2 * n7, 'N × 2 (bf16)');
  put('memory_budget', mixed, 'per_gpu_bytes.gradients', 2 * n7, 'N × 2 (bf16)');
  put('memory_budget', mixed, 'per_gpu_bytes.master_weights', 4 * n7, 'N × 4 (fp32 copy)');
  put('memory_budget', mixed, 'per_gpu_bytes.optimizer_states', 8 * n7, 'N × (4 + 4) (Adam m, v in fp32)');
  const gpt2 = preset('models', 'gpt2-small').config;
  put('flops', { model: 'gpt2-small', seq: 1024 }, 'per_token.six_n', 6 * params(gpt2).total, '6N');
  // Chapter 3 problem: GPT-2 small's exact count against 6N (training = 3 × forward, no recomputation).
  const gpt2Forward = forwardPerToken(gpt2, 1024).total;
  put('flops', { model: 'gpt2-small', seq: 1024 }, 'model_flops', 3 * gpt2Forward, '3 × forward per token');
  put(
    'flops',
    { model: 'gpt2-small', seq: 1024 },
    'ratio_exact_to_six_nd',
    (3 * gpt2Forward) / (6 * params(gpt2).total),
    'exact / 6N',
  );
  // Chapter 2 problems: rounding to fp16 (5 exponent, 10 mantissa bits) and bf16 (8, 7).
  for (const [format, value, e, m] of [
    ['fp16', 1e-8, 5, 10],
    ['bf16', 1e-8, 8, 7],
    ['fp16', 0.00065536, 5, 10],
  ]) {
    const stored = roundToFormat(value, e, m);
    put('float_encode', { format, value }, 'value', stored, 'round to nearest, ties to even');
    put('float_encode', { format, value }, 'error_rel', Math.abs(stored - value) / value, '|stored − value| / value');
  }
  assert.equal(roundToFormat(1e-8, 5, 10), 0, "below half of fp16's smallest subnormal 2^-24");
  // Chapter 6: checkpoints. Inference: the working weights; resume: weights + fp32 master + Adam m, v (gradients
  // are rebuilt by the next step). Bytes per parameter 2 + 4 + 8 in bf16 mixed precision, 4 + 8 in fp32
  // (Rajbhandari et al. 2020, sec. 3.1: K = 12 bytes of optimizer state per parameter in mixed precision).
  const ckpt70 = { model: 'llama-3-70b', recipe: 'bf16_mixed_adamw' };
  put('checkpoint_size', ckpt70, 'inference_bytes', 2 * n70, 'N × 2');
  put('checkpoint_size', { model: 'llama-3-70b' }, 'inference_bytes', 2 * n70, 'N × 2 (bf16, the default recipe)');
  put('checkpoint_size', ckpt70, 'resume_bytes_per_param', 14, '2 + 4 + 8');
  put('checkpoint_size', ckpt70, 'resume_bytes', 14 * n70, 'N × 14');
  put('checkpoint_size', { model: 'llama-2-7b', recipe: 'fp32_adamw' }, 'resume_bytes_per_param', 12, '4 + 8');
  put('checkpoint_size', { model: 'llama-2-7b', recipe: 'fp32_adamw' }, 'resume_bytes', 12 * n7, 'N × 12');
  fineTuning(put, l27, n7);

  // Chapter 8a: ring and tree all-reduce on the H100 preset's links at 80 % of line rate (Jeaugey, nccl-tests #212:
  // 370 of 450 GB/s), priced as NCCL's own cost model does (src/graph/tuning.cc at NVIDIA/nccl b6475625): each
  // protocol's latency and bandwidth share, the fastest protocol taken.
  const links = preset('hardware', 'h100-sxm').interconnect;
  const nvlink = 0.8 * links.intra_node_gb_s * 1e9;
  const card = 0.8 * links.network_gb_s * 1e9;
  const allReduce = (bytes, perNode, nodes, tree = false) => {
    const n = perNode * nodes;
    const link = nodes > 1 ? Math.min(perNode > 1 ? nvlink : Infinity, perNode * card) : nvlink;
    const picked = {};
    const seconds = nccl('all_reduce', bytes, perNode, nodes, link, tree ? 'tree' : 'ring', picked);
    return { seconds, latency: picked.latency, algbw: bytes / seconds, busbw: ((bytes / seconds) * 2 * (n - 1)) / n };
  };
  for (const [bytes, perNode, nodes, tree] of [
    [1e9, 8, 1],
    [1e9, 8, 2],
    [1e9, 1, 16],
    [1024, 8, 1],
    [1024, 8, 64],
    [1024, 8, 64, true],
  ]) {
    const args = { collective: 'all_reduce', message_bytes: bytes, ranks_per_node: perNode };
    if (nodes > 1) args.nodes = nodes;
    args.hardware = 'h100-sxm';
    if (tree) args.algorithm = 'tree';
    const r = allReduce(bytes, perNode, nodes, tree);
    const why = `${tree ? 'tree 2 log2 n' : 'ring 2(n-1)'} steps + bytes over the slowest link`;
    put('collective', args, 'seconds', r.seconds, why);
    put('collective', args, 'algorithm_bytes_per_s', r.algbw, 'message / time');
    put('collective', args, 'bus_bytes_per_s', r.busbw, 'algbw × 2(n-1)/n (nccl-tests)');
    put('collective', args, 'latency_seconds', r.latency, "the fastest protocol's latency (NCCL's model)");
  }
  // The communication roofline of one Llama 2 7B layer, bf16, one 4,096-token sequence per replica.
  const l27c = preset('models', 'llama-2-7b').config;
  for (const k of [8, 16]) {
    const args = { model: 'llama-2-7b', hardware: 'h100-sxm', seq: 4096, degree: k };
    const h = l27c.hidden_size,
      a = l27c.num_heads,
      d = l27c.head_dim ?? h / a,
      kvd = l27c.num_kv_heads * d,
      T = 4096,
      L = l27c.num_layers;
    const matmulParams = h * (a * d + 2 * kvd) + a * d * h + 3 * h * l27c.ffn_hidden_size;
    const layerParams = matmulParams + 2 * h; // two RMSNorm weight vectors
    const flops = 3 * (2 * matmulParams + 4 * T * a * d) * T; // training = 3 × forward; QKᵀ and AV 2·s·a·d each
    const ring = (k - 1) / k;
    // Rings within a node ride NVLink; across nodes the node's cards together carry what leaves it (NCCL's ring),
    // the same link `collective` prices the ring at; a stage boundary across nodes is one card.
    const ringLink = k <= links.gpus_per_node ? nvlink : Math.min(nvlink, links.gpus_per_node * card);
    const pointLink = k <= links.gpus_per_node ? nvlink : card;
    const ridgeAt = (link) => (preset('hardware', 'h100-sxm').peak_tflops.bf16 * 1e12) / link;
    const rows = {
      dp: flops / (2 * ring * layerParams * 2),
      fsdp: flops / (3 * ring * layerParams * 2),
      tp: flops / k / (4 * 2 * ring * T * h * 2),
      pp: flops / ((2 * T * h * 2 * k) / L),
      cp: flops / k / (3 * ring * T * 2 * kvd * 2),
    };
    for (const [id, value] of Object.entries(rows))
      put('comm_roofline', args, `strategies[id=${id}].flops_per_byte`, value, `${id} layer FLOPs / bytes sent`);
    for (const id of Object.keys(rows))
      put(
        'comm_roofline',
        args,
        `strategies[id=${id}].ridge_flops_per_byte`,
        ridgeAt(id === 'pp' ? pointLink : ringLink),
        'peak / link bandwidth',
      );
  }
  // Mixtral 8x7B: all eight experts' gradients against two experts' FLOPs per token (top-2, SwiGLU, GQA with 8 KV heads).
  {
    const c = preset('models', 'mixtral-8x7b').config;
    const args = { model: 'mixtral-8x7b', hardware: 'h100-sxm', seq: 4096, degree: 8 };
    const h = c.hidden_size,
      a = c.num_heads,
      d = c.head_dim,
      kvd = c.num_kv_heads * d,
      f = c.ffn_hidden_size,
      E = c.num_experts,
      top = c.experts_per_token,
      T = 4096;
    const attn = h * (a * d + 2 * kvd) + a * d * h;
    const forward = 2 * attn + 2 * h * E + 2 * top * 3 * h * f + 4 * T * a * d; // router h × E; QKᵀ and AV
    const flops = 3 * forward * T;
    const layerParams = attn + E * 3 * h * f + h * E + 2 * h;
    put(
      'comm_roofline',
      args,
      'strategies[id=dp].flops_per_byte',
      flops / (2 * (7 / 8) * layerParams * 2),
      'all experts all-reduced',
    );
    put(
      'comm_roofline',
      args,
      'strategies[id=ep].flops_per_byte',
      flops / (4 * (7 / 8) * T * top * h * 2),
      '4 all-to-alls of top-k rows',
    );
  }
  teach25a(put, allReduce, nvlink, card);
  // Chapter 8e, FP8: the step model's times come from the native CLI (tally call step_time); the speed-up is not
  // computed here, only read from the page's two numbers.
  const run70 = {
    model: 'llama-3-70b',
    hardware: 'h100-sxm',
    gpus: 64,
    tp: 4,
    pp: 4,
    micro_batch: 1,
    global_batch: 512,
    seq: 8192,
    zero: 1,
    recompute: 'none',
    sequence_parallel: true,
    flash_attention: true,
  };
  const fp8Run = { ...run70, precision: 'fp8-delayed' };
  for (const args of [run70, fp8Run]) {
    const r = native('step_time', args);
    for (const field of ['step_seconds', 'tokens_per_second', 'mfu'])
      put('step_time', args, field, r[field], 'native CLI: tally call step_time');
    for (const part of r.breakdown) {
      put('step_time', args, `breakdown[id=${part.id}].seconds`, part.seconds, 'native CLI: tally call step_time');
      put('step_time', args, `breakdown[id=${part.id}].share`, part.share, 'native CLI: tally call step_time');
    }
    // What the prose says of them: fp8 runs against twice the bf16 peak (NVIDIA H100 datasheet).
    assert.equal(r.peak_flops_per_s, (args.precision ? 2 : 1) * h100.peak_tflops.bf16 * 1e12);
  }
  const [bf16Step, fp8Step] = [run70, fp8Run].map((a) => native('step_time', a).step_seconds);
  assert.ok(bf16Step / fp8Step > 1.1 && bf16Step / fp8Step < 1.8, 'the page says shorter, well short of twice as fast');
  // Chapter 8e, measuring: MFU from a logged 60,000 tokens/s, Llama 3 8B at 4,096 tokens on 8 H100s: model FLOPs per
  // token = 3 × forward (Kaplan et al. 2020, full s × s attention), over GPUs × dense peak.
  const l38m = preset('models', 'llama-3-8b').config;
  const logged = { model: 'llama-3-8b', seq: 4096, tokens_per_second: 60000, gpus: 8, hardware: 'h100-sxm' };
  const perToken8 = 3 * forwardPerToken(l38m, 4096).total;
  put('mfu', logged, 'model_flops_per_token', perToken8, '3 × forward per token');
  put('mfu', logged, 'mfu', (perToken8 * 60000) / (8 * peak), 'FLOPs/token × tokens/s / (GPUs × peak)');
  put('mfu', logged, 'six_n_mfu', (6 * params(l38m).total * 60000) / (8 * peak), '6N × tokens/s / (GPUs × peak)');
  const small8 = {
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    gpus: 8,
    tp: 1,
    pp: 1,
    zero: 3,
    micro_batch: 2,
    global_batch: 64,
    seq: 4096,
    recompute: 'selective',
    flash_attention: true,
  };
  const run8 = native('step_time', small8);
  put('step_time', small8, 'tokens_per_second', run8.tokens_per_second, 'native CLI: tally call step_time');
  put('step_time', small8, 'mfu', run8.mfu, 'native CLI: tally call step_time');
  assert.ok(
    run8.breakdown.every((b) => !b.exposed || !/comm/.test(b.id) || b.seconds === 0 || b.id === 'zero3_comm'),
    'no exposed comm but ZeRO-3 prefetch ends',
  );
  const z3Share = run8.breakdown.find((b) => b.id === 'zero3_comm').share;
  assert.ok(z3Share > 0 && z3Share < 0.02, 'each micro-batch waits for its first gather and last reduce-scatter only');
  put('step_time', small8, 'breakdown[id=zero3_comm].share', z3Share, 'native CLI: tally call step_time');
  // Chapter 8e, goodput: Llama 3 405B's 419 unexpected interruptions in 54 days on 16,384 H100s (Dubey et al. 2024,
  // sec. 3.3.4); Young (1974) sqrt(2δM); Daly (2006) sqrt(2δM)(1 + sqrt(x)/3 + x/9) − δ, x = δ/2M, and his complete
  // model T_w = M e^(R/M) (e^((τ+δ)/M) − 1) T_s / τ for exponential failures.
  const gpuMtbf = (54 * 24 * 16384) / 419;
  const goodput = (extra, jobGpus = 16384) => {
    const args = { interruptions: 419, days: 54, observed_gpus: 16384, ...extra };
    const M = (gpuMtbf / jobGpus) * 3600,
      d = args.checkpoint_seconds,
      R = args.restart_seconds;
    const x = d / (2 * M);
    const daly = Math.sqrt(2 * d * M) * (1 + Math.sqrt(x) / 3 + x / 9) - d;
    const eff = daly / (M * Math.exp(R / M) * (Math.exp((daly + d) / M) - 1));
    put('checkpoint_interval', args, 'gpu_mtbf_hours', gpuMtbf, '54 days × 24 h × 16,384 GPUs / 419');
    put('checkpoint_interval', args, 'job_mtbf_hours', M / 3600, 'GPU MTBF / GPUs');
    put('checkpoint_interval', args, 'young_interval_seconds', Math.sqrt(2 * d * M), 'Young: sqrt(2δM)');
    put('checkpoint_interval', args, 'daly_interval_seconds', daly, 'Daly 2006 higher-order interval');
    put('checkpoint_interval', args, 'optimum.efficiency', eff, 'Daly complete model at his interval');
    put('checkpoint_interval', args, 'restart_share', R / M, 'R/M');
    if (args.work_hours) {
      const lost = args.work_hours / eff - args.work_hours;
      put('checkpoint_interval', args, 'optimum.lost_hours', lost, 'T_s / goodput − T_s');
      put(
        'checkpoint_interval',
        args,
        'optimum.lost_dollars',
        lost * jobGpus * args.dollars_per_gpu_hour,
        'hours × GPUs × $',
      );
    }
    return eff;
  };
  const slow = { checkpoint_seconds: 300, restart_seconds: 600 },
    fast = { checkpoint_seconds: 30, restart_seconds: 300 },
    money = { work_hours: 1296, dollars_per_gpu_hour: 2 };
  goodput(slow);
  goodput({ ...slow, ...money });
  const fastEff = goodput(fast);
  goodput({ ...fast, ...money });
  assert.ok(Math.abs(fastEff - 0.9) < 0.01, 'the page says the 30-second checkpoint keeps about 90 %');
  goodput({ gpus: 65536, ...fast }, 65536);
  put(
    'checkpoint_size',
    { model: 'llama-3-405b' },
    'resume_bytes',
    14 * params(preset('models', 'llama-3-405b').config).total,
    'N × 14',
  );
  // Chapter 2: the float explorer opens on 257 = 2^8 + 1, halfway between bf16's neighbours 256 and 258 (spacing 2 at
  // 2^8 with 8 significant bits); round-to-nearest-even keeps 256 (IEEE 754-2019, 4.3.1).
  put('float_encode', { format: 'bf16', value: 257 }, 'value', 256, 'ties to even between 256 and 258');
  // Chapter 8b: the validation files' statistics, recomputed here from the file (counts, halves, published
  // figures) and each run's prediction as the CLI's `tally step --validate --json` lists it: median, share within
  // 20 %, worst and as-given band coverage are arithmetic on those rows. The generic-stack coverage needs bands
  // the rows do not carry, so it is the CLI's own figure.
  for (const name of ['runs.json', 'runs-modern.json']) {
    const file = JSON.parse(readFileSync(path.join(root, 'content/validation', name), 'utf8'));
    const cli = JSON.parse(
      nativeRun(['step', '--validate', '--runs', path.join(root, 'content/validation', name), '--json']),
    );
    const args = { runs_file: name };
    const why = `statistics of content/validation/${name}`;
    const half = (run) => run.split ?? file.split?.[run.source_key] ?? 'all';
    const given = file.runs.filter((r) => r.expressible_today !== false);
    const published = new Map(given.map((r) => [r.id, r.published.value]));
    const errors = cli.runs.map((row) => ({
      ...row,
      e: (row.predicted - published.get(row.id)) / published.get(row.id),
    }));
    const median = (xs) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    };
    put('step_validation', args, 'counts.total', file.runs.length, why);
    put('step_validation', args, 'counts.runs', given.length, why);
    put('step_validation', args, 'counts.sources', new Set(given.map((r) => r.source_key ?? r.id)).size, why);
    put('step_validation', args, 'median_abs_error', median(errors.map((r) => Math.abs(r.e))), why);
    for (const h of new Set(file.runs.map(half))) {
      const rows = errors.filter((r) => half(given.find((g) => g.id === r.id)) === h);
      put('step_validation', args, `halves.${h}.count`, rows.length, why);
      put(
        'step_validation',
        args,
        `halves.${h}.skipped_not_expressible`,
        file.runs.filter((r) => r.expressible_today === false && half(r) === h).length,
        why,
      );
      put('step_validation', args, `halves.${h}.median_abs_error`, median(rows.map((r) => Math.abs(r.e))), why);
      put(
        'step_validation',
        args,
        `halves.${h}.within_20_percent`,
        rows.filter((r) => Math.abs(r.e) <= 0.2).length / rows.length,
        why,
      );
      put('step_validation', args, `halves.${h}.worst_abs_error`, Math.max(...rows.map((r) => Math.abs(r.e))), why);
    }
    const inside = errors.filter((r) => r.band && r.e >= r.band.lower && r.e <= r.band.upper).length;
    put('step_validation', args, 'band_coverage.inside_leave_one_source_out_band', inside / errors.length, why);
    put(
      'step_validation',
      args,
      'band_coverage.generic_inside_leave_one_source_out_band',
      cli.band_coverage.generic_inside_leave_one_source_out_band,
      'tally step --validate --json',
    );
  }
  // Chapter 10: one run (Llama 3 70B, 15T tokens, 1,024 H100s) end to end. Counts are recomputed here; the
  // predictions (step time, planner, serving) come from the native CLI, each checked against a bound it must obey.
  {
    const l70 = preset('models', 'llama-3-70b').config;
    const n70 = params(l70).total;
    put('params', { model: 'llama-3-70b' }, 'total', n70, 'architecture count');
    const layout = {
      model: 'llama-3-70b',
      hardware: 'h100-sxm',
      gpus: 1024,
      seq: 8192,
      tp: 8,
      pp: 4,
      micro_batch: 1,
      global_batch: 2048,
      zero: 1,
      sequence_parallel: true,
      recompute: 'none',
      flash_attention: true,
    };
    const cost = { ...layout, tokens: 15e12, dollars_per_gpu_hour: 2, mfu: 'predicted' };
    const fp8 = { precision: 'fp8-delayed', dtype: 'fp8', stack: 'megatron-te' };
    const cost8 = { ...cost, ...fp8 };
    const run = native('training_cost', cost);
    // Attention's FLOPs at 8,192 tokens add to 6ND (chapter 3), by less than a quarter for a model this wide.
    assert.ok(run.total_flops > 6 * n70 * 15e12 && run.total_flops < 1.25 * 6 * n70 * 15e12, 'a little above 6ND');
    put('training_cost', cost, 'total_flops', run.total_flops, 'native CLI, between 6ND and 1.25 x 6ND');
    put('training_cost', cost, 'tokens_per_param', 15e12 / n70, 'tokens / parameters');
    const step = native('step_time', layout);
    // Days = FLOPs / (GPUs x peak x MFU): the predicted MFU turned into wall time (chapter 4's formula).
    const peak = preset('hardware', 'h100-sxm').peak_tflops.bf16 * 1e12;
    assert.ok(Math.abs(run.seconds / (run.total_flops / (1024 * peak * run.mfu)) - 1) < 1e-9, 'days from MFU');
    assert.ok(Math.abs(run.mfu / step.mfu - 1) < 0.05, 'training_cost predicts the step model MFU');
    put('training_cost', cost, 'seconds', run.total_flops / (1024 * peak * run.mfu), 'FLOPs / (GPUs x peak x MFU)');
    put('training_cost', cost, 'cost_dollars', (run.seconds / 3600) * 1024 * 2, 'GPU-hours x $2');
    const run8 = native('training_cost', cost8);
    assert.ok(run8.seconds < run.seconds, 'FP8 finishes sooner');
    put('training_cost', cost8, 'seconds', run8.seconds, 'native CLI, sooner than bf16');
    const one = { model: 'llama-3-70b', hardware: 'h100-sxm', gpus: 1 };
    const alone = native('memory_budget', one).per_gpu_bytes.total;
    assert.ok(alone > 16 * n70, 'at least 16 bytes per parameter of mixed-precision AdamW state');
    put('memory_budget', one, 'per_gpu_bytes.total', alone, 'native CLI, above 16 bytes x parameters');
    put('memory_budget', one, 'usable_bytes', usable('h100-sxm').usable, 'reported less the allowance');
    put('step_time', layout, 'dp', 1024 / (8 * 4), 'GPUs / (tp x pp)');
    const sharded = native('memory_budget', layout).per_gpu_bytes.total;
    assert.ok(sharded < usable('h100-sxm').usable, 'the sharded layout fits');
    put('memory_budget', layout, 'per_gpu_bytes.total', sharded, 'native CLI, under the usable bytes');
    // Chapter 7's box: the activations are the largest class of the layout's per-GPU bytes.
    const classes = native('memory_budget', layout).per_gpu_bytes;
    for (const [name, bytes] of Object.entries(classes))
      if (name !== 'activations' && name !== 'total') assert.ok(classes.activations > bytes, `activations > ${name}`);
    put('memory_budget', layout, 'per_gpu_bytes.activations', classes.activations, 'native CLI, the largest class');
    // Chapter 8c's box: causal work per rank at 131,072 tokens over cp 16. Contiguous chunk i of c tokens attends
    // to its own triangle and every earlier token: c·i·c + c(c+1)/2 pairs, against seq(seq+1)/2 over cp on average.
    const cpArgs = { model: 'llama-3-70b', seq: 131072, cp: 16, hardware: 'h100-sxm' };
    const chunk = 131072 / 16;
    const busiest = chunk * 15 * chunk + (chunk * (chunk + 1)) / 2;
    put('context_parallel', cpArgs, 'contiguous.max_over_mean', busiest / ((131072 * 131073) / 2 / 16), 'causal pairs');
    // Balanced: rank i holds chunks i and 2cp − 1 − i of 2cp, whose pair counts add to the same total for every rank.
    put('context_parallel', cpArgs, 'balanced.max_over_mean', 1, 'equal pairs per rank');
    const planArgs = {
      model: 'llama-3-70b',
      hardware: 'h100-sxm',
      gpus: 1024,
      seq: 8192,
      global_batch: 2048,
      flash_attention: true,
      top: 3,
    };
    const plan = native('plan', planArgs);
    for (const f of ['tp', 'pp', 'zero'])
      put('plan', planArgs, `best.0.layout.${f}`, plan.best[0].layout[f], 'native CLI');
    assert.ok(plan.best[0].tokens_per_second >= step.tokens_per_second, "the planner's first is at least as fast");
    put('plan', planArgs, 'evaluated', plan.evaluated, 'native CLI');
    put(
      'step_time',
      layout,
      'step_seconds',
      (2048 * 8192) / step.tokens_per_second,
      'tokens per step / tokens per second',
    );
    put('step_time', layout, 'global_batch', 2048, 'the stated batch');
    put('step_time', layout, 'mfu', step.mfu, 'native CLI');
    put('step_time', layout, 'band.lower', step.band.lower, 'native CLI');
    put('step_time', layout, 'band.upper', step.band.upper, 'native CLI');
    // Chapter 8e's sizing list: the same run's band as tokens per second, and the sharded layout's usable bytes.
    for (const [field, bound, how] of [
      ['band.tokens_per_second_low', step.band.upper, 'tokens/s ÷ (1 + upper)'],
      ['band.tokens_per_second_high', step.band.lower, 'tokens/s ÷ (1 + lower)'],
    ])
      put('step_time', layout, field, step.tokens_per_second / (1 + bound), how);
    put('memory_budget', layout, 'usable_bytes', usable('h100-sxm').usable, 'reported less the allowance');
    const step8 = native('step_time', { ...layout, ...fp8 });
    put('step_time', { ...layout, ...fp8 }, 'mfu', step8.mfu, 'native CLI');
    const ck = {
      interruptions: 419,
      days: 54,
      observed_gpus: 16384,
      checkpoint_seconds: 300,
      restart_seconds: 600,
      gpus: 1024,
    };
    // Llama 3 paper (Dubey et al. 2024, sec. 3.3.4): 419 unexpected interruptions in 54 days on 16,384 GPUs.
    put('checkpoint_interval', ck, 'job_mtbf_hours', (54 * 24 * 16384) / 419 / 1024, 'GPU-hours per failure / GPUs');
    put(
      'checkpoint_interval',
      ck,
      'optimum.efficiency',
      native('checkpoint_interval', ck).optimum.efficiency,
      'native CLI',
    );
    const serve = { model: 'llama-3-70b', tp: 8, context: 8192, batch: 16, hardware: 'h100-sxm' };
    put('tp_serving', serve, 'tokens_per_s', native('tp_serving', serve).tokens_per_s, 'native CLI');
  }

  return map;
}

/**
 * Chapters 8a (overlap), 8c (long context) and 8d (mixture of experts). Overlap: the closed forms of each
 * schedule (every collective after compute, or only the tail exposed when each fits under the next compute);
 * long context: Korthikanti et al.'s per-layer terms with FlashAttention, split over TP and CP, and causal pair
 * counts; MoE: parameters from the preset files (DeepSeek-V3's MLA and shared expert, gpt-oss's biases and
 * sinks), a binomial load against the capacity, and 2 k h e (ep - 1)/ep bytes per token.
 */
function teach25a(put, allReduce, nvlink, card) {
  // Ring all-gather or reduce-scatter inside one node, as NCCL's model prices it.
  const gather = (bytes, n = 8) => nccl('all_gather', bytes, n, 1, nvlink, 'ring');
  const L = 32,
    F = 0.0028,
    B = 2 * F,
    grads = 2 * 202383360; // Llama 2 7B layer: 202,383,360 parameters, bf16 gradients
  const hw = { hardware: 'h100-sxm' };
  const ddp = { scheme: 'ddp', layers: L, forward_seconds: F, layer_bytes: grads, bucket_bytes: grads };
  const place2 = { ranks_per_node: 8, nodes: 2, ...hw };
  const ar = allReduce(grads, 8, 2).seconds;
  assert.ok(ar < B, 'each bucket fits under the next backward');
  put('overlap', { ...ddp, ...place2, overlap: false }, 'exposed_comm_seconds', L * ar, 'all 32 after backward');
  put('overlap', { ...ddp, ...place2, overlap: false }, 'step_seconds', L * (F + B) + L * ar, 'compute + all');
  put('overlap', { ...ddp, ...place2 }, 'exposed_comm_seconds', ar, "only the first layer's bucket");
  put('overlap', { ...ddp, ...place2 }, 'step_seconds', L * (F + B) + ar, 'compute + one bucket');
  const fsdp = { scheme: 'fsdp', layers: L, forward_seconds: F, layer_bytes: grads, ranks_per_node: 8, ...hw };
  const g = gather(grads);
  assert.ok(2 * g < F, 'a gather and a reduce-scatter fit under a forward');
  put(
    'overlap',
    { ...fsdp, overlap: false },
    'exposed_comm_seconds',
    L * 3 * g,
    '2 gathers + 1 reduce-scatter a layer',
  );
  put('overlap', fsdp, 'exposed_comm_seconds', 2 * g, 'first gather + last reduce-scatter');
  put('overlap', fsdp, 'step_seconds', L * (F + B) + 2 * g, 'compute + first gather + last reduce-scatter');
  const tp = { scheme: 'tp', layers: L, forward_seconds: 0.00035, layer_bytes: 2 * 4096 * 4096 * 2 }; // F / 8
  const whole = gather(tp.layer_bytes),
    piece = gather(tp.layer_bytes / 4);
  assert.ok(piece < F / 8 / 4, 'a piece moves faster than a chunk computes');
  put(
    'overlap',
    { ...tp, chunks: 4, ranks_per_node: 8, ...hw },
    'exposed_comm_seconds',
    2 * L * piece,
    'one piece a pass',
  );
  put(
    'overlap',
    { ...tp, ranks_per_node: 8, ...hw, overlap: false },
    'exposed_comm_seconds',
    2 * L * whole,
    'whole a pass',
  );

  // Chapter 8c: the causal attention matmuls' share of the forward FLOPs.
  for (const [model, seq] of [
    ['llama-3-8b', 8192],
    ['llama-3-8b', 131072],
    ['llama-3-405b', 131072],
  ]) {
    const f = forwardPerToken(preset('models', model).config, seq, true);
    put(
      'flops',
      { model, seq, attention_flops: 'causal' },
      'components[id=attn_scores].share',
      f.scores / f.total,
      'QKᵀ / forward',
    );
  }
  // Llama 3 405B, TP 8 + SP, PP 16 (16 micro-batches in flight on stage 1, 8 layers), FlashAttention.
  const c405 = preset('models', 'llama-3-405b').config;
  for (const cp of [1, 16]) {
    const s = 131072 / cp,
      h = c405.hidden_size,
      a = c405.num_heads,
      kv = c405.num_kv_heads,
      d = c405.head_dim ?? h / a,
      f = c405.ffn_hidden_size;
    const layer = (2 * s * (4 * h + 2 * a * d + 2 * kv * d + 3 * f) + 4 * a * s) / 8;
    const ring = cp > 1 ? (4 * 2 * s * kv * (d + d)) / 8 : 0; // two K, V blocks in flight, over TP
    const args = {
      model: 'llama-3-405b',
      hardware: 'h100-sxm',
      seq: 131072,
      flash_attention: true,
      tp: 8,
      sequence_parallel: true,
      pp: 16,
      cp,
      gpus: 128 * cp,
      zero: 1,
    };
    put('memory_budget', args, 'per_gpu_bytes.activations', layer * 8 * 16 + ring, 'layer terms / tp × 8 × 16 + ring');
  }
  // Ring attention step, CP 16 over the network card; causal pairs per rank.
  const peak = preset('hardware', 'h100-sxm').peak_tflops.bf16 * 1e12;
  const cx16 = { model: 'llama-3-405b', seq: 131072, cp: 16 };
  put('context_parallel', cx16, 'ring.min_block_tokens', (8 * 2 * peak) / (2 * 128 * card), 'n_kv e P / (2 a B)');
  put('context_parallel', cx16, 'ring.compute_seconds', (4 * 8192 ** 2 * 128 * 128) / peak, '4 b² a d / P');
  // The hop is a send/recv: plus NCCL's one-step Simple ring latency across nodes, 8.4 + 14 us (src/graph/tuning.cc
  // at NVIDIA/nccl b6475625, baseLat and the network hwLat).
  const hopLatency = (8.4 + 14) * 1e-6;
  put(
    'context_parallel',
    cx16,
    'ring.transfer_seconds',
    (2 * 8192 * 8 * 128 * 2) / card + hopLatency,
    '2 b n_kv d e / B + NCCL hop latency',
  );
  const pairs = (lo, hi) => (hi * (hi + 1) - lo * (lo + 1)) / 2; // queries lo..hi-1 see q + 1 keys
  for (const cp of [8, 16]) {
    const s = 131072,
      c = s / cp,
      mean = pairs(0, s) / cp;
    const args = { model: 'llama-3-405b', seq: s, cp };
    put('context_parallel', args, 'contiguous.max_over_mean', pairs(s - c, s) / mean, 'last slice / mean');
    const half = s / (2 * cp);
    const balanced = [...Array(cp).keys()].map(
      (r) => pairs(r * half, (r + 1) * half) + pairs((2 * cp - 1 - r) * half, (2 * cp - r) * half),
    );
    put('context_parallel', args, 'balanced.max_over_mean', Math.max(...balanced) / mean, 'chunks r and 2c-1-r');
  }

  // Chapter 8d: parameters counted from the preset files.
  const moeParams = (c) => {
    const h = c.hidden_size,
      V = c.vocab_size,
      L = c.num_layers,
      a = c.num_heads,
      E = c.num_experts,
      k = c.experts_per_token,
      shared = c.num_shared_experts ?? 0,
      f = c.ffn_hidden_size,
      Ld = c.num_dense_layers ?? 0;
    let attn;
    if (c.kv_lora_rank) {
      // Multi-head latent attention (DeepSeek-V2 sec. 2.1): low-rank Q and KV with their norms, decoupled RoPE key.
      const [rq, rkv, dr, dv] = [c.q_lora_rank, c.kv_lora_rank, c.qk_rope_head_dim, c.v_head_dim];
      const dn = c.head_dim - dr;
      attn = h * rq + rq + rq * a * (dn + dr) + h * (rkv + dr) + rkv + rkv * a * (dn + dv) + a * dv * h;
    } else {
      const [kv, d] = [c.num_kv_heads, c.head_dim];
      attn = h * (a * d + 2 * kv * d) + a * d * h;
      if (c.qkv_bias) attn += a * d + 2 * kv * d;
      if (c.attn_out_bias) attn += h;
      if (c.attention_sinks) attn += a; // one learned sink logit per head
    }
    const expert = 3 * h * f + (c.mlp_bias ? 2 * f + h : 0);
    const router = h * E + (c.router_bias ? E : 0);
    const outside = V * h * (c.tied_embeddings ? 1 : 2) + h;
    const layers = (experts) =>
      L * (attn + 2 * h) + Ld * 3 * h * (c.dense_ffn_hidden_size ?? 0) + (L - Ld) * (experts * expert + router);
    return { total: outside + layers(E + shared), active: outside + layers(k + shared), embedding: V * h };
  };
  const published = { 'deepseek-v3': [671e9, 37e9], 'gpt-oss-120b': [116.83e9, 5.13e9] };
  for (const model of ['mixtral-8x7b', 'deepseek-v3', 'gpt-oss-120b']) {
    const p = moeParams(preset('models', model).config);
    if (published[model]) {
      // DeepSeek-V3 report: "671B total parameters with 37B activated"; gpt-oss card: 116.83B, 5.13B active
      // (no embedding table).
      const [total, active] = published[model];
      assert.ok(Math.abs(p.total / total - 1) < 1e-3, `${model} total against the published count`);
      const counted = model === 'gpt-oss-120b' ? p.active - p.embedding : p.active;
      assert.ok(Math.abs(counted / active - 1) < 0.02, `${model} active against the published count`);
    }
    put('moe_routing', { model }, 'params.total', p.total, 'every expert');
    put('moe_routing', { model }, 'params.active', p.active, 'top-k + shared experts');
    put('moe_routing', { model }, 'params.active_fraction', p.active / p.total, 'active / total');
    if (model === 'gpt-oss-120b')
      put('moe_routing', { model }, 'params.active_without_embedding', p.active - p.embedding, 'less V·h');
  }
  // Drops: an expert's load is Binomial(n, k/E) over the n = seq × ep tokens of the EP group.
  const expectedDrop = (n, prob, cf) => {
    const mean = n * prob,
      C = Math.ceil(cf * mean);
    let logPmf = n * Math.log1p(-prob),
      below = 0,
      mass = 0;
    for (let x = 0; x < C; x++) {
      const pmf = Math.exp(logPmf);
      below += x * pmf;
      mass += pmf;
      logPmf += Math.log(n - x) - Math.log(x + 1) + Math.log(prob) - Math.log1p(-prob);
    }
    return Math.max(0, mean - below - C * (1 - mass)) / mean;
  };
  for (const [seq, cf] of [
    [4096, 1],
    [4096, 1.25],
    [256, 1],
  ])
    put(
      'moe_routing',
      { model: 'mixtral-8x7b', seq, ep: 8, capacity_factor: cf },
      'random_routing.expected_dropped_fraction',
      expectedDrop(seq * 8, 2 / 8, cf),
      'E[max(0, X - C)] / mean, X binomial',
    );
  const mx = { model: 'mixtral-8x7b', seq: 4096, ep: 8 };
  put('moe_routing', mx, 'all_to_all_bytes_per_token_forward', 2 * 2 * 4096 * 2 * (7 / 8), '2 k h e (ep-1)/ep');
  const ds = { model: 'deepseek-v3', seq: 4096, ep: 64 };
  put('moe_routing', ds, 'all_to_all_bytes_per_token_forward', 2 * 8 * 7168 * 2 * (63 / 64), '2 k h e (ep-1)/ep');
  put('moe_routing', ds, 'tokens_per_expert', (4096 * 8 * 64) / 256, 'k s ep / E');
  // One dispatch over 8 nodes of 8: the off-node share (56 of 64 peers) through the card, all-to-all latency.
  const message = 4096 * 8 * 7168 * 2;
  const a2a = 3.6e-6 + 63 * 0.9e-6 + Math.max(((7 / 64) * message) / nvlink, ((56 / 64) * message) / card);
  put('moe_routing', ds, 'all_to_all.seconds', a2a, 'pairwise exchange, network-bound');
  put(
    'moe_routing',
    ds,
    'all_to_all.expert_forward_seconds_at_peak',
    (2 * 3 * 7168 * 2048 * 4096 * 8) / peak,
    '6 h f rows / P',
  );
}

/**
 * Chapter 6, fine-tuning: Llama 2 7B on an RTX 4090 at 512 tokens. LoRA adds r (d_in + d_out) per adapted matrix
 * (Hu et al. 2021); the frozen base has no gradients or optimizer states; adapters train in fp32 with AdamW
 * (4 + 4 + 8 bytes). NF4 (Dettmers et al. 2023, sec. 3): n/2 bytes + one absmax per 64 weights, fp32, or with
 * double quantization 8-bit plus an fp32 scale per 256 absmax values and one fp32 offset per tensor.
 */
function fineTuning(put, c, n) {
  const [h, f, L, V, s] = [c.hidden_size, c.ffn_hidden_size, c.num_layers, c.vocab_size, 512];
  const card = usable('rtx-4090').usable;
  const activations = llamaActivations(c, s, 1, 'none');
  const full = {
    model: 'llama-2-7b',
    method: 'full',
    recipe: 'bf16_adamw_no_master',
    optimizer: 'adamw_8bit',
    hardware: 'rtx-4090',
    seq: s,
  };
  // bitsandbytes 8-bit AdamW: m and v in one byte each plus an fp32 absmax per 2048 values of each.
  const states8bit = 2 * n + 2 * 4 * Math.ceil(n / 2048);
  put('finetune', full, 'usable_bytes', card, 'reported − 512 MiB − 5 %');
  put(
    'finetune',
    full,
    'per_gpu_bytes.total',
    2 * n + 2 * n + states8bit + activations,
    'bf16 w + g, 8-bit m, v, acts',
  );

  const adapterParams = (r, modules) => modules.reduce((sum, [dIn, dOut]) => sum + r * (dIn + dOut), 0) * L;
  const lora = { model: 'llama-2-7b', method: 'lora', hardware: 'rtx-4090', seq: s };
  const p8 = adapterParams(8, [
    [h, h],
    [h, h],
  ]);
  assert.equal(p8, 4194304, "PEFT's printed trainable params for Llama 2 7B, r 8, q and v");
  put('finetune', lora, 'lora.params', p8, 'r (h + h) × 2 × L');
  put('finetune', lora, 'per_gpu_bytes.frozen_weights', 2 * n, 'N × 2 (bf16 base)');
  put('finetune', lora, 'per_gpu_bytes.optimizer_states', 8 * p8, 'adapters × (4 + 4)');
  put('finetune', lora, 'per_gpu_bytes.activations', activations, 'Llama layer terms at 512 tokens');
  const loraActs = 8 * s * 2 * L * 2; // A·x: r values per token per adapter, bf16
  put('finetune', lora, 'per_gpu_bytes.total', 2 * n + 16 * p8 + activations + loraActs, 'base + adapters + acts');

  const nf4 = (count, dq) => {
    const blocks = Math.ceil(count / 64);
    return Math.ceil(count / 2) + (dq ? blocks + 4 * Math.ceil(blocks / 256) + 4 : 4 * blocks);
  };
  const base = (dq) => L * (4 * nf4(h * h, dq) + 3 * nf4(h * f, dq)) + 2 * (2 * V * h + (2 * L + 1) * h);
  const qlora = {
    model: 'llama-2-7b',
    method: 'qlora',
    lora_rank: 64,
    lora_targets: 'all-linear',
    hardware: 'rtx-4090',
    seq: s,
  };
  const p64 = adapterParams(64, [
    [h, h],
    [h, h],
    [h, h],
    [h, h],
    [h, f],
    [h, f],
    [f, h],
  ]);
  put('finetune', qlora, 'base.nf4_bits_per_param', 4 + 8 / 64 + 32 / (64 * 256), 'QLoRA sec. 3');
  put('finetune', qlora, 'per_gpu_bytes.frozen_weights', base(true), 'NF4 linear layers + bf16 rest');
  put('finetune', qlora, 'lora.params', p64, 'r (d_in + d_out) over 7 matrices × L');
  const qloraActs = 64 * s * 7 * L * 2;
  const dequant = 2 * h * f; // the largest weight in bf16
  put(
    'finetune',
    qlora,
    'per_gpu_bytes.total',
    base(true) + 16 * p64 + activations + qloraActs + dequant,
    'NF4 base + adapters + acts + dequant buffer',
  );

  // Problem 4: rank 16 on q, k, v, o.
  const r16 = { model: 'llama-2-7b', method: 'lora', lora_rank: 16, lora_targets: 'q,k,v,o' };
  const p16 = 4 * 16 * (h + h) * L;
  put('finetune', r16, 'lora.params', p16, '4 × 16 (h + h) × L');
  put('finetune', r16, 'per_gpu_bytes.trainable_weights', 4 * p16, 'fp32 adapters');
  put('finetune', r16, 'per_gpu_bytes.gradients', 4 * p16, 'fp32 adapter gradients');
  put('finetune', r16, 'per_gpu_bytes.optimizer_states', 8 * p16, 'fp32 m and v');
  // Problem 5: double quantization.
  const plain = { model: 'llama-2-7b', method: 'qlora' };
  const single = { model: 'llama-2-7b', method: 'qlora', double_quant: false };
  put('finetune', plain, 'base.params_quantized', L * (4 * h * h + 3 * h * f), 'linear weights of the layers');
  put('finetune', plain, 'per_gpu_bytes.frozen_weights', base(true), 'double-quantized NF4');
  put('finetune', single, 'base.nf4_bits_per_param', 4 + 32 / 64, 'fp32 absmax per 64');
  put('finetune', single, 'per_gpu_bytes.frozen_weights', base(false), 'NF4 with fp32 absmax');
}

/** The page's display formats (web/widgets/value.js); its module defines custom elements, which node lacks. */
async function pageFormats() {
  globalThis.HTMLElement ??= class {};
  globalThis.customElements ??= { define() {}, get() {} };
  return (await import(pathToFileURL(path.join(root, 'web/widgets/value.js')).href)).FORMATS;
}

const unescapeHtml = (text) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Every <tally-value> of the prerendered page, as the browser would read its attributes and text. */
function prerenderedValues(html) {
  const attribute = (attrs, name) => {
    const match = new RegExp(`\\s${name}=(?:"([^"]*)"|'([^']*)')`).exec(attrs);
    return match ? unescapeHtml(match[1] ?? match[2]) : null;
  };
  return [...html.matchAll(/<tally-value\b([^>]*)>([^<]*)<\/tally-value>/g)].map(([, attrs, text]) => ({
    method: attribute(attrs, 'method'),
    args: attribute(attrs, 'args'),
    field: attribute(attrs, 'field'),
    format: attribute(attrs, 'format') ?? 'num',
    text: unescapeHtml(text),
    state: attribute(attrs, 'data-state'),
  }));
}

test('every engine-computed number in the prose equals an independently computed or published value', async () => {
  const expected = expectations();
  const values = prerenderedValues(readFileSync(path.join(siteDir, 'index.html'), 'utf8'));
  assert.ok(values.length >= 100, `about a hundred inline numbers (${values.length})`);
  const uncovered = [];
  const rows = [];
  for (const v of values) {
    const key = `${v.method}|${JSON.stringify(JSON.parse(v.args ?? '{}'))}|${v.field}`;
    const want = expected.get(key);
    if (!want) {
      uncovered.push(key);
      continue;
    }
    rows.push({ ...v, key, want: want.value, why: want.why });
  }
  assert.deepEqual(uncovered, [], 'inline numbers without an independent expectation');
  // The page's display formats (rounding only) applied to the expected values.
  const FORMATS = await pageFormats();
  const wrong = rows
    .map((r) => ({ ...r, expected: FORMATS[r.format](r.want) }))
    .filter((r) => r.state !== 'ok' || r.text !== r.expected)
    .map((r) => `${r.key}: page "${r.text}", expected "${r.expected}" (${r.why})`);
  assert.deepEqual(wrong, []);
});

/**
 * NCCL's cost model of one collective (src/graph/tuning.cc at NVIDIA/nccl b6475625): for each protocol (LL, LL128,
 * Simple) a latency of base + steps x per-step latency (tree: 2 x (ranks per node - 1) NVLink steps + 2 log2(nodes)
 * network steps) and a share of the link, the fastest taken. Written from the source, apart from the engine's copy.
 */
function nccl(kind, bytes, perNode, nodes, link, algorithm, picked = {}) {
  const n = perNode * nodes;
  const multi = nodes > 1;
  const us = 1e-6;
  const protocols = [
    { base: [6.8, 6.6], nvl: [0.6, 0.6], net: [5.0, 2.7] }, // LL: [tree, ring]
    { base: [14, 14], nvl: [1.25, 1.9], net: [8.5, 4.0] }, // LL128
    { base: [0, 8.4], nvl: [28, 3.4], net: [28, 14] }, // Simple
  ];
  const treeCorrection = [
    [1, 1, 1, 1, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1, 1],
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9],
  ];
  const llCap = [87.7e9, 39e9, 20.4e9][nodes <= 2 ? nodes - 1 : 2];
  const allReduce = kind === 'all_reduce';
  const steps = allReduce ? 2 * (n - 1) : n - 1;
  const interSteps = allReduce ? (multi ? 2 * nodes : 0) : nodes - 1;
  const log2i = (x) => (x < 2 ? 0 : Math.floor(Math.log2(x)));
  let best = Infinity;
  protocols.forEach((p, i) => {
    const simple = i === 2;
    let lat, bw;
    if (algorithm === 'tree') {
      lat = p.base[0] + 2 * ((perNode - 1) * p.nvl[0] + log2i(nodes) * p.net[0]);
      let bus = 0.92 * link;
      if (i === 0) bus = Math.min(bus / 3.8, llCap);
      if (i === 1) bus *= nodes === 1 ? 7 / 9 : 120 / 128;
      const logSize = log2i(bytes / 64);
      if (logSize < 23) bus *= treeCorrection[i][logSize];
      bw = bytes / (0.5 * bus);
    } else {
      const intra = multi ? Math.max(p.nvl[1], simple ? 3 : 1) : p.nvl[1];
      lat = p.base[1] + (steps - interSteps) * intra + interSteps * p.net[1];
      if (simple && multi && allReduce && bytes / (16 * n) >= 64) lat *= 1.4;
      let bus = link;
      if (i === 0) bus = Math.min(llCap, bus * (multi || allReduce ? 1 / 4 : 1 / 3));
      if (i === 1) bus *= perNode < 2 ? 0.7 : 0.92;
      bw = (bytes * steps) / (n * bus);
    }
    if (lat * us + bw < best) {
      best = lat * us + bw;
      picked.latency = lat * us;
    }
  });
  return best;
}
