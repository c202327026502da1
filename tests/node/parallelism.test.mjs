// Issue 23's placement options in the memory budget (context parallelism, HSDP, CPU offload, folded expert
// parallelism) give the same answers in wasm as natively, to the last bit, and bad layouts name their field.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, loadEngine, nativeRun } from './engine.mjs';

// ZeRO-3 with optimizer states and parameters offloaded to the host (DeepSpeed's offload_param).
const zero3Offload = {
  model: 'llama-2-7b',
  gpus: 8,
  zero: 3,
  offload: 'optimizer_params',
  zero3_gather: 'module',
  hardware: 'h100-sxm',
};
const cases = [
  ['memory_budget', { model: 'llama-3-8b', seq: 32768, gpus: 16, tp: 2, cp: 4, zero: 1, flash_attention: true }],
  [
    'memory_budget',
    { model: 'llama-3-70b', seq: 8192, gpus: 64, tp: 8, cp: 2, zero: 3, shard_group: 8, flash_attention: true },
  ],
  ['memory_budget', zero3Offload],
  ['memory_budget', { model: 'llama-2-13b', gpus: 1, zero: 2, offload: 'optimizer', hardware: 'a100-80gb' }],
  ['memory_budget', { model: 'mixtral-8x7b', gpus: 8, tp: 2, ep: 8, etp: 1, zero: 1 }],
  [
    'memory_budget',
    { model: 'deepseek-v3', seq: 4096, gpus: 256, tp: 2, pp: 8, ep: 16, etp: 1, cp: 2, zero: 1, flash_attention: true },
  ],
  ['memory_budget', { model: 'gpt2-small', seq: 1024, gpus: 4, cp: 4, flash_attention: true, cp_load_balance: false }],
  ['memory_budget', { model: 'llama-2-7b', seq: 24, gpus: 8, cp: 8, flash_attention: true }],
  ['memory_budget', { model: 'mixtral-8x7b', gpus: 8, tp: 2, ep: 8, etp: 2 }],
  ['memory_budget', { model: 'llama-2-7b', gpus: 12, zero: 3, shard_group: 5 }],
];

test('wasm and native give the same envelope text for cp, HSDP, offload and folded EP layouts', async () => {
  await assertSameEnvelopes(cases);
});

test('the JS API reports the host budget per GPU and per node, and the placement in the setup', async () => {
  const engine = await loadEngine();
  // DeepSpeed's ZeRO-3 estimator with offload_param: 18 B/param on the host per node, 4 × largest layer on GPU.
  const r = engine.call('memory_budget', zero3Offload);
  const n = 6738415616;
  assert.equal(r.host_bytes.per_gpu.total, (18 * n) / 8);
  assert.equal(r.host_bytes.gpus_per_node, 8);
  assert.equal(r.host_bytes.per_node, 18 * n);
  assert.equal(r.per_gpu_bytes.weights, 0);
  assert.equal(r.per_gpu_bytes.zero3_buffer, 4 * 32000 * 4096);
  assert.equal(r.setup.offload, 'optimizer_params');
  // Without a preset the node is unknown: per GPU only.
  const bare = engine.call('memory_budget', { model: 'llama-2-7b', gpus: 8, zero: 2, offload: 'optimizer' });
  assert.equal(bare.host_bytes.per_node, null);
  assert.equal(bare.host_bytes.per_gpu.total, (16 * n) / 8);
  const hsdp = engine.call('memory_budget', { model: 'llama-2-7b', gpus: 16, zero: 3, shard_group: 8 });
  assert.deepEqual([hsdp.setup.shard_group, hsdp.setup.hsdp_replicas, hsdp.setup.cp], [8, 2, 1]);
  // The defaults add no host budget.
  assert.equal('host_bytes' in engine.call('memory_budget', { model: 'llama-2-7b' }), false);
});

test('bad placements name the field and the allowed values', async () => {
  const engine = await loadEngine();
  const refused = (args, field, pattern) =>
    assert.throws(
      () => engine.call('memory_budget', { model: 'llama-2-7b', flash_attention: true, ...args }),
      (error) => error.field === field && pattern.test(error.message),
    );
  refused({ seq: 24, gpus: 8, cp: 8 }, 'cp', /2·cp \| seq.*\{1, 2, 3, 4, 6, 12\}/);
  refused({ gpus: 2, cp: 2, flash_attention: false }, 'cp', /flash_attention/);
  refused({ gpus: 12, zero: 3, shard_group: 5 }, 'shard_group', /\{1, 2, 3, 4, 6, 12\}/);
  refused({ offload: 'optimizer' }, 'offload', /zero 1, 2 or 3/);
  refused({ zero: 2, offload: 'params' }, 'offload', /zero 3/);
  refused({ offload: 'disk' }, 'offload', /none, optimizer, params or optimizer_params/);
  refused({ gpus: 2, tp: 2, etp: 1 }, 'etp', /mixture-of-experts/);
  assert.throws(
    () => engine.call('memory_budget', { model: 'mixtral-8x7b', gpus: 8, tp: 2, ep: 8, etp: 2 }),
    (error) => error.field === 'etp' && /tp·cp·dp = 8/.test(error.message),
  );
});

test('the CLI takes the placement flags and prints the host budget', () => {
  const text = nativeRun([
    'memory',
    '--model',
    'llama-2-7b',
    '--gpus',
    '8',
    '--zero',
    '3',
    '--offload',
    'optimizer_params',
    '--hardware',
    'h100-sxm',
  ]);
  assert.match(text, /offload optimizer_params/);
  assert.match(text, /host memory per node \(8 GPUs\)/);
  const cp = JSON.parse(
    nativeRun([
      'memory',
      '--model',
      'llama-2-7b',
      '--seq',
      '8192',
      '--gpus',
      '4',
      '--cp',
      '4',
      '--flash-attn',
      '--no-cp-load-balance',
      '--json',
    ]),
  );
  assert.equal(cp.setup.cp, 4);
  assert.equal(cp.setup.cp_load_balance, false);
  assert.ok(cp.activations.terms.some((t) => t.id === 'ring_kv_buffers'));
});
