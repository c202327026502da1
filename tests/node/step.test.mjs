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
  assert.throws(
    () => engine.call('step_time', { model: 'llama-2-7b', hardware: 'h100-sxm', gpus: 10, tp: 4 }),
    (e) => e.field === 'gpus',
  );
  assert.throws(
    () => engine.call('step_time', { model: 'llama-2-7b', hardware: 'h100-sxm', gpus: 8, tp: 8, interleave: 2 }),
    (e) => e.field === 'interleave',
  );
});
