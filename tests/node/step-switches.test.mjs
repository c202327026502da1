// The run's switches (engine/include/tally/step/stack.h): the step widget's "More settings" list is step_time's
// declared switches, no more and no fewer, and a run with every switch set away from its stack's default gives the
// same numbers in wasm as natively.
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadEngine, nativeCall, root } from './engine.mjs';

const { STACK_SWITCHES } = await import(pathToFileURL(path.join(root, 'web/widgets/step.js')).href);

test("the step widget offers exactly step_time's switches, numbers as numbers", async () => {
  const engine = await loadEngine();
  const step = engine.call('methods', { detail: true }).find((m) => m.name === 'step_time');
  const declared = step.args.filter((a) => a.default === "depends: the stack's default");
  // cost_balanced_stages is the training setup's argument (memory_budget reads it too), declared with the setup.
  const expected = [...declared.map((a) => a.name), 'cost_balanced_stages'].sort();
  assert.deepEqual(STACK_SWITCHES.map(([name]) => name).sort(), expected);
  for (const a of declared) {
    const [, , kind] = STACK_SWITCHES.find(([name]) => name === a.name);
    assert.equal(kind === 'number', a.type === 'number', a.name);
  }
});

test('every switch set away from its stack default: wasm equals native, and the layout echoes each one', async () => {
  const engine = await loadEngine();
  const base = {
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    gpus: 64,
    tp: 2,
    pp: 2,
    cp: 2,
    zero: 3,
    sequence_parallel: true,
    seq: 16384,
    global_batch: 64,
    recompute: 'selective',
    flash_attention: true,
    stack: 'megatron-te',
  };
  const own = engine.call('step_time', base).layout;
  const step = engine.call('methods', { detail: true }).find((m) => m.name === 'step_time');
  const flipped = { ...base };
  for (const [name] of STACK_SWITCHES) {
    const a = step.args.find((x) => x.name === name);
    if (typeof own[name] === 'boolean') flipped[name] = !own[name];
    else if (typeof own[name] === 'number') flipped[name] = own[name] + 1024;
    else flipped[name] = a.values.find((v) => v !== own[name]);
  }
  const text = JSON.stringify(flipped);
  assert.equal(engine.raw('step_time', text), nativeCall('step_time', text));
  const layout = engine.call('step_time', flipped).layout;
  for (const [name] of STACK_SWITCHES) assert.deepEqual(layout[name], flipped[name], name);
  assert.notEqual(engine.call('step_time', flipped).step_seconds, engine.call('step_time', base).step_seconds);
});
