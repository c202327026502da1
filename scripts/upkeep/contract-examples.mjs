// Valid calls of every API method (an object, or a list of them where one call does not show every shape a
// result takes): gen-contract.mjs runs them and types each method's result fields in web/tally-api.d.ts from what
// they return (tests/node/contract.test.mjs requires an entry per declared method and checks other calls fit).
// Small sizes keep the measured methods (GEMM, probes) to milliseconds.
import { readFileSync } from 'node:fs';

// A model method's calls: a dense model and a mixture of experts (whose config and results carry more fields).
const denseAndMoe = (args) => [args, { ...args, model: 'deepseek-v3' }];
// A multimodal config.json (Gemma 3 4B): params counts its vision tower apart from the language model.
const fixture = (name) =>
  JSON.parse(readFileSync(new URL(`../../tests/fixtures/hf/${name}.json`, import.meta.url), 'utf8'));
const gemma3 = fixture('gemma3-4b-it');
// A hybrid (Qwen3-Next: gated DeltaNet layers beside attention): per-layer linear-attention parameters, recurrent state.
const qwen3Next = fixture('qwen3-next-80b-a3b');

export const EXAMPLES = {
  methods: { detail: true },
  assumptions: {},
  presets: {},
  model: denseAndMoe({ model: 'gpt2-small' }),
  params: [...denseAndMoe({ model: 'gpt2-small' }), { hf_config: gemma3 }, { hf_config: qwen3Next }],
  flops: denseAndMoe({ model: 'gpt2-small', tokens: 1e9 }),
  training_cost: denseAndMoe({
    model: 'gpt2-small',
    tokens: 1e9,
    gpus: 8,
    mfu: 0.4,
    hardware: 'h100-sxm',
    dollars_per_gpu_hour: 2,
  }),
  mfu: denseAndMoe({ model: 'gpt2-small', tokens_per_second: 1e5, gpus: 8, hardware: 'h100-sxm' }),
  recipes: {},
  // with a hardware preset (capacity, fits) and without (those are null)
  memory_budget: [
    ...denseAndMoe({ model: 'llama-2-7b', gpus: 8, zero: 1, hardware: 'h100-sxm' }),
    { model: 'llama-2-7b', gpus: 8, zero: 3 },
    // host memory and a figure to compare with
    { model: 'llama-2-7b', gpus: 8, zero: 3, offload: 'optimizer', reference_bytes: 1e10 },
  ],
  finetune: [
    { model: 'llama-3-8b', method: 'qlora', hardware: 'h100-sxm' },
    { model: 'mixtral-8x7b', method: 'lora', lora_targets: 'all-linear' },
  ],
  // min_gpus, then largest_model without and with a model
  fit: [
    { model: 'llama-2-7b', hardware: 'h100-sxm' },
    { mode: 'largest_model', gpus: 8, hardware: 'h100-sxm' },
    { mode: 'largest_model', gpus: 8, hardware: 'h100-sxm', model: 'llama-2-7b' },
  ],
  kv_cache: [
    ...denseAndMoe({ model: 'llama-2-7b', context: 4096, batch: 2, hardware: 'h100-sxm' }),
    { hf_config: qwen3Next, context: 4096, batch: 2, hardware: 'h100-sxm' },
    { model: 'deepseek-v3-2-exp', context: 4096, batch: 2 }, // DeepSeek Sparse Attention's indexer keys
  ],
  tensor_bytes: { shape: [4096, 4096], dtype: 'bf16' },
  float_formats: {},
  float_encode: { format: 'e4m3', value: 500 },
  float_compare: { value: 0.1 },
  float_decode: { format: 'e4m3', code: 126 },
  float_table: [{ format: 'e2m1' }, { format: 'e2m1', kind: 'values' }],
  // with a block comparison beside, and one that fails
  float_explore: [
    { format: 'e4m3', code: 126, table: true },
    { format: 'e4m3', code: 126, blocks: { values: [0.5, -1, 2, 3.5] } },
    { format: 'e4m3', code: 126, blocks: { values: [] } },
  ],
  float_encode_batch: { format: 'bf16', count: 16 },
  block_quantize: { scheme: 'mxfp4', values: [0.5, -1, 2, 3.5] },
  block_compare: { values: [0.5, -1, 2, 3.5] },
  gemm_kernels: {},
  // the second is above the naive kernel's limit (skipped), one row each so it stays fast
  gemm_bench: [{ n: 16 }, { n: 513, m: 1, reps: 1, warmup: 0, min_sample_ms: 0.1 }],
  gemm_run: { m: 8, n: 8, k: 8, kernel: 'naive' },
  gemm_intensity: {},
  roofline: [{ hardware: 'h100-sxm', intensity: [10, 1000] }, {}],
  roofline_custom: { peak_flops_per_s: 1e15, bandwidth_bytes_per_s: 3e12 },
  probe_peak: { samples: 1 },
  probe_bandwidth: { samples: 1, mib: 1 },
  step_time: denseAndMoe({ model: 'llama-2-7b', hardware: 'h100-sxm', gpus: 16, tp: 2, pp: 2, global_batch: 64 }),
  plan: { model: 'gpt2-small', hardware: 'h100-sxm', gpus: 8, top: 2 },
  // The project's smaller runs file, as the page's chapter 8b passes it.
  step_validation: { runs: readFileSync(new URL('../../content/validation/runs.json', import.meta.url), 'utf8') },
  compute_units: [
    { params: 7e9, tokens: 1e12 },
    { params: 7e9, tokens: 1e12, hardware: 'h100-sxm', days: 30 },
  ],
  checkpoint_size: denseAndMoe({ model: 'gpt2-small' }),
  matmul_roofline: { m: 4096, n: 4096, k: 4096, hardware: 'h100-sxm' },
  inference: denseAndMoe({ model: 'llama-2-7b', context: 4096, hardware: 'h100-sxm' }),
  paged_kv: [
    { model: 'llama-3-8b', reserved_context: 8192, mean_context: 2000, hardware: 'h100-sxm' },
    { model: 'llama-3-70b', hardware: 'h100-sxm' },
  ],
  speculative_decoding: { model: 'llama-3-70b', draft_model: 'llama-3-8b', hardware: 'b200' },
  tp_serving: { model: 'llama-3-70b', tp: 8, context: 8192, batch: 16, hardware: 'h100-sxm' },
  weight_quantization: { model: 'llama-3-8b', context: 8192, batch: 16, hardware: 'h100-sxm' },
  pipeline_schedule: {},
  collective: { message_bytes: 1e9, ranks_per_node: 8 },
  comm_roofline: denseAndMoe({ model: 'llama-2-7b' }),
  overlap: {},
  moe_routing: [{ model: 'mixtral-8x7b' }, { model: 'mixtral-8x7b', capacity_factor: 1.25 }],
  context_parallel: denseAndMoe({ model: 'llama-2-7b' }),
  checkpoint_interval: [
    { checkpoint_seconds: 60, restart_seconds: 600, mtbf_hours: 10 },
    { checkpoint_seconds: 60, restart_seconds: 600, mtbf_hours: 10, interval_seconds: 3600 },
  ],
};
