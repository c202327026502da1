// Fine-tuning (LoRA, QLoRA, full with 8-bit AdamW): the wasm build gives the native CLI's envelopes byte for byte.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadEngine, nativeCall, nativeRun, root } from './engine.mjs';

const modes = [
  { model: 'llama-2-7b', method: 'lora', lora_rank: 8, lora_targets: 'q,v' },
  { model: 'llama-3-8b', method: 'lora', lora_rank: 16, lora_targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] },
  { model: 'mixtral-8x7b', method: 'lora', lora_targets: 'all-linear', lora_dropout: 0.05, seq: 1024 },
  {
    model: 'llama-2-7b',
    method: 'qlora',
    lora_rank: 64,
    lora_targets: 'all-linear',
    adapter_dtype: 'bf16',
    paged: true,
    seq: 512,
    recompute: 'full',
    hardware: 'h100-sxm',
  },
  { model: 'deepseek-v3', method: 'qlora', lora_targets: 'q_a,q_b,kv_a,kv_b,o', seq: 256 },
  { model: 'llama-2-7b', method: 'full', recipe: 'bf16_adamw_no_master', optimizer: 'adamw_8bit', paged: true },
  {
    model: 'llama-2-7b',
    method: 'full',
    recipe: 'bf16_pure_adamw',
    optimizer_in_backward: true,
    loss_chunks: 8,
    recompute: 'full',
    activation_offloading: true,
  },
  { model: 'llama-2-7b', method: 'qlora', grads_freed: true, loss_chunks: 4, seq: 1024 },
];

test('wasm finetune equals native for every fine-tuning mode, good input and bad', async () => {
  const engine = await loadEngine();
  const bad = [
    { model: 'llama-3-8b', lora_rank: 5000 },
    { model: 'llama-2-7b', lora_targets: 'q,qq' },
    { model: 'gpt2-small', lora_targets: 'gate' },
    { model: 'llama-2-7b', lora_alpha: 0 },
    { model: 'llama-2-7b', method: 'full', lora_rank: 8 },
    { model: 'llama-2-7b', method: 'full', activation_offloading: true },
    { model: 'llama-2-7b', loss_chunks: 5000, seq: 4096 },
  ];
  for (const args of [...modes, ...bad]) {
    const text = JSON.stringify(args);
    assert.equal(engine.raw('finetune', text), nativeCall('finetune', text), text);
  }
});

test('the wasm engine counts PEFT adapters and QLoRA NF4 like the paper, and names bad fields', async () => {
  const engine = await loadEngine();
  // PEFT's printed trainable params: Llama-2-7B r 8 q,v = 4,194,304 (2 · 8 · (4096 + 4096) · 32).
  assert.equal(engine.call('finetune', modes[0]).lora.params, 4194304);
  // QLoRA sec. 3: NF4 with double quantization, 4 + 8/64 + 32/(64 · 256) bits per weight.
  const qlora = engine.call('finetune', modes[3]);
  assert.equal(qlora.base.nf4_bits_per_param, 4.126953125);
  assert.equal(qlora.per_gpu_bytes.gradients, qlora.lora.params * 2);
  assert.equal(qlora.paged_floor_bytes, qlora.per_gpu_bytes.total - qlora.per_gpu_bytes.optimizer_states);
  assert.throws(
    () => engine.call('finetune', { model: 'llama-3-8b', lora_rank: 5000 }),
    (error) => error.field === 'lora_rank' && /\[1, 1024\]/.test(error.message),
  );
  assert.throws(
    () => engine.call('finetune', { model: 'llama-2-7b', lora_alpha: -1 }),
    (error) => error.field === 'lora_alpha' && /\(0, 1e6\]/.test(error.message),
  );
});

test('tally finetune --json prints the finetune result the wasm engine gives', async () => {
  const engine = await loadEngine();
  const native = JSON.parse(
    nativeRun(['finetune', '--model', 'llama-2-7b', '--method', 'qlora', '--lora-targets', 'all-linear', '--json']),
  );
  assert.deepEqual(
    engine.call('finetune', { model: 'llama-2-7b', method: 'qlora', lora_targets: 'all-linear' }),
    native,
  );
});

test("LitGPT's measured LoRA and QLoRA peaks (content/validation/finetune-peaks.json) hold within 10 %", async () => {
  // Each row with its source's settings: bitsandbytes 0.41.1 kept every 4-bit linear's input (quantized_inputs_kept).
  const data = JSON.parse(readFileSync(path.join(root, 'content/validation/finetune-peaks.json'), 'utf8'));
  const engine = await loadEngine();
  const litgpt = data.runs.filter((run) => run.source === 'litgpt-2023-10');
  assert.equal(litgpt.length, 7);
  for (const run of litgpt) {
    const args = { ...data.source_args[run.source], ...run.args };
    const predicted = engine.call('finetune', args).per_gpu_bytes.total / 1e9;
    const error = predicted / run.measured_gb - 1;
    assert.ok(Math.abs(error) <= 0.1, `${run.name}: predicted ${predicted.toFixed(2)} GB, measured ${run.measured_gb}`);
  }
});

test("torchtune's Llama 3.2 3B ladder with its settings as switches: median error within 10 %", async () => {
  // The rows' grads_freed, loss_chunks, optimizer_in_backward and activation_offloading; compile is not a switch.
  const data = JSON.parse(readFileSync(path.join(root, 'content/validation/finetune-peaks.json'), 'utf8'));
  const engine = await loadEngine();
  const rows = data.runs.filter((run) => run.source === 'torchtune-2024-11');
  assert.equal(rows.length, 9);
  const errors = rows.map((run) => {
    const args = { ...data.source_args[run.source], ...run.args };
    const predicted = engine.call('finetune', args).per_gpu_bytes.total;
    return Math.abs(predicted / (run.measured_gib * 2 ** 30) - 1);
  });
  errors.sort((a, b) => a - b);
  assert.ok(errors[4] <= 0.1, `median |error| ${(errors[4] * 100).toFixed(1)} %`);
});

test('QLoRA with bitsandbytes before 0.43.2 adds the saved inputs of the 4-bit linears and nothing else', async () => {
  const engine = await loadEngine();
  const args = { model: 'llama-2-7b', method: 'qlora', seq: 1304 };
  const today = engine.call('finetune', args);
  const kept = engine.call('finetune', { ...args, quantized_inputs_kept: true });
  assert.equal(today.per_gpu_bytes.quantized_inputs, 0);
  assert.equal(kept.base.quantized_inputs_kept, true);
  assert.equal(kept.per_gpu_bytes.total - today.per_gpu_bytes.total, kept.per_gpu_bytes.quantized_inputs);
  assert.throws(
    () => engine.call('finetune', { model: 'llama-2-7b', method: 'lora', quantized_inputs_kept: true }),
    (error) => error.field === 'quantized_inputs_kept',
  );
});
