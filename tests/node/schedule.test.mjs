// The pipeline_schedule method (engine/src/schedule.cpp) in wasm: the same envelope text as native, the
// closed forms through the JS API, and a refusal naming its field.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, nativeCall } from './engine.mjs';

const cases = [
  {},
  { schedule: 'gpipe', stages: 4, microbatches: 8 },
  { schedule: '1f1b', stages: 8, microbatches: 32 },
  { schedule: 'interleaved', stages: 4, microbatches: 16, chunks: 4, forward: 1.5, backward: 3.25 },
  { schedule: 'interleaved', stages: 4, microbatches: 6 },
  { schedule: 'dualpipe' },
];

test('wasm and native give the same pipeline_schedule envelopes', async () => {
  const engine = await loadEngine();
  for (const args of cases) {
    const text = JSON.stringify(args);
    assert.equal(engine.raw('pipeline_schedule', text), nativeCall('pipeline_schedule', text), text);
  }
});

test('the simulated bubble is (p − 1)/(v·m) and the idle share (p − 1)/(v·m + p − 1)', async () => {
  const engine = await loadEngine();
  const r = engine.call('pipeline_schedule', { schedule: 'interleaved', stages: 8, microbatches: 64, chunks: 2 });
  assert.ok(Math.abs(r.bubble_ratio - 7 / 128) < 1e-12, String(r.bubble_ratio));
  assert.ok(Math.abs(r.idle_fraction - 7 / 135) < 1e-12, String(r.idle_fraction));
  assert.equal(r.blocks.length, 2 * 8 * 64 * 2);
});

test('an interleaved schedule with micro-batches not a multiple of stages is refused naming microbatches', async () => {
  const engine = await loadEngine();
  assert.throws(
    () => engine.call('pipeline_schedule', { schedule: 'interleaved', stages: 4, microbatches: 6 }),
    (e) => e.field === 'microbatches' && /multiple of stages/.test(e.message),
  );
});
