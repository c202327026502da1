// The wasm build predicts the same step time and plan as the native CLI, to the last bit.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadEngine, nativeCall, root, PLANNER_EXAMPLE } from './engine.mjs';

const runs = JSON.parse(readFileSync(path.join(root, 'content/validation/runs.json'), 'utf8')).runs;

test('wasm step_time equals native for every published run in content/validation/runs.json', async () => {
  const engine = await loadEngine();
  assert.ok(runs.length >= 8);
  for (const run of runs) {
    const text = JSON.stringify(run.args);
    assert.equal(engine.raw('step_time', text), nativeCall('step_time', text), run.id);
  }
});

test('wasm step_time equals native for every expressible run in content/validation/runs-modern.json (FP8 included)', async () => {
  const engine = await loadEngine();
  const modern = JSON.parse(readFileSync(path.join(root, 'content/validation/runs-modern.json'), 'utf8')).runs;
  const expressible = modern.filter((run) => run.expressible_today);
  assert.ok(expressible.some((run) => run.args.precision !== 'bf16'));
  for (const run of expressible) {
    const text = JSON.stringify(run.args);
    assert.equal(engine.raw('step_time', text), nativeCall('step_time', text), run.id);
  }
});

test('wasm plan equals native, and bad layouts are errors naming the field', async () => {
  const engine = await loadEngine();
  const args = JSON.stringify({ ...PLANNER_EXAMPLE, top: 3 });
  assert.equal(engine.raw('plan', args), nativeCall('plan', args));
  // From seq 32768 on the planner also tries context parallelism (engine/src/plan/plan.cpp).
  const long = JSON.stringify({ ...JSON.parse(args), model: 'llama-3-8b', gpus: 16, seq: 131072, global_batch: 16 });
  const longPlan = engine.raw('plan', long);
  assert.equal(longPlan, nativeCall('plan', long));
  assert.ok(JSON.parse(longPlan).result.best.some((row) => row.layout.cp > 1));
  assert.throws(
    () => engine.call('step_time', { model: 'llama-3-8b', hardware: 'h100-sxm', gpus: 4, cp: 4, seq: 65540 }),
    (e) => e.field === 'cp',
  );
  assert.throws(
    () => engine.call('step_time', { model: 'llama-2-7b', hardware: 'h100-sxm', gpus: 10, tp: 4 }),
    (e) => e.field === 'gpus',
  );
  assert.throws(
    () => engine.call('step_time', { model: 'llama-2-7b', hardware: 'h100-sxm', gpus: 8, tp: 8, interleave: 2 }),
    (e) => e.field === 'interleave',
  );
});

test('wasm equals native on HSDP and LoRA step times, and their bad input names the field', async () => {
  const engine = await loadEngine();
  const base = {
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    gpus: 64,
    seq: 8192,
    micro_batch: 2,
    global_batch: 128,
    zero: 3,
    flash_attention: true,
    stack: 'torchtitan',
    compile: true,
  };
  for (const extra of [{ shard_group: 8 }, { lora_rank: 16, lora_targets: 'q,k,v,o' }, { compile: false }]) {
    const text = JSON.stringify({ ...base, ...extra });
    assert.equal(engine.raw('step_time', text), nativeCall('step_time', text), text);
  }
  for (const [extra, field] of [
    [{ shard_group: 3 }, 'shard_group'],
    [{ shard_group: 8, zero: 1 }, 'shard_group'],
    [{ lora_rank: 4, lora_targets: 'q,x' }, 'lora_targets'],
    [{ fp8_all_gather: true }, 'fp8_all_gather'],
  ]) {
    const args = { ...base, ...extra };
    assert.throws(
      () => engine.call('step_time', args),
      (e) => e.field === field,
      JSON.stringify(extra),
    );
    assert.equal(engine.raw('step_time', JSON.stringify(args)), nativeCall('step_time', JSON.stringify(args)));
  }
});
