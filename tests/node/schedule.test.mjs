// The pipeline_schedule method (engine/src/step/schedule.cpp) in wasm: the same envelope text as native, the
// closed forms through the JS API, and a refusal naming its field.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, assertSameEnvelopes } from './engine.mjs';

const cases = [
  {},
  { schedule: 'gpipe', stages: 4, microbatches: 8 },
  { schedule: '1f1b', stages: 8, microbatches: 32 },
  { schedule: 'interleaved', stages: 4, microbatches: 16, chunks: 4, forward: 1.5, backward: 3.25 },
  { schedule: 'interleaved', stages: 4, microbatches: 6 },
  { schedule: 'dualpipe' },
  { schedule: 'zb-h1', stages: 8, microbatches: 32 },
  { schedule: 'zb-h1', stages: 4, microbatches: 8, forward: 1, backward: 2.2, weight: 0.9 },
  { schedule: 'dualpipe', stages: 8, microbatches: 20 },
  { schedule: 'dualpipe', stages: 5, microbatches: 20 },
  { schedule: '1f1b', weight: 1 },
  { schedule: 'zb-h2' },
];

test('wasm and native give the same pipeline_schedule envelopes', async () => {
  await assertSameEnvelopes(cases.map((args) => ['pipeline_schedule', args]));
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

test("ZB-H1 and DualPipe through the JS API: the papers' idle times, memory and refusals naming the field", async () => {
  const engine = await loadEngine();
  // F = 1, B = 2 (the whole backward), W = 1: ZB-H1 idles (p − 1)(F + B − 2W) (Qi et al. 2024), DualPipe
  // (p/2 − 1)(F&B + B − 3W) with F&B = F + B, holding p + 1 micro-batches and two stages' weights (DualPipe README).
  const zb = engine.call('pipeline_schedule', { schedule: 'zb-h1', stages: 8, microbatches: 32 });
  assert.equal(zb.bubble_time, 7 * (1 + 2 - 2));
  assert.equal(zb.bubble_time_published, zb.bubble_time);
  assert.equal(zb.peak_in_flight, 8);
  assert.equal(zb.blocks.filter((b) => b.kind === 'W').length, 8 * 32);
  const dual = engine.call('pipeline_schedule', { schedule: 'dualpipe', stages: 8, microbatches: 20 });
  assert.ok(Math.abs(dual.bubble_time - 3 * (3 + 2 - 3)) < 1e-9, String(dual.bubble_time));
  assert.equal(dual.peak_in_flight, 9);
  assert.equal(dual.parameter_copies, 2);
  assert.ok(
    dual.blocks.some((b) => b.pair !== undefined && b.chunk === 1),
    'overlapped pairs in both directions',
  );
  const refused = (args, field, pattern) =>
    assert.throws(
      () => engine.call('pipeline_schedule', args),
      (e) => e.field === field && pattern.test(e.message),
    );
  refused({ schedule: 'dualpipe', stages: 5, microbatches: 20 }, 'stages', /even number of stages/);
  refused({ schedule: 'dualpipe', stages: 4, microbatches: 6 }, 'microbatches', /at least 2·stages/);
  refused({ schedule: 'zb-h1', weight: 2 }, 'weight', /\(0, backward = 2\)/);
  refused({ schedule: '1f1b', weight: 1 }, 'weight', /applies to zb-h1 and dualpipe/);
  refused({ schedule: 'zb-h2' }, 'schedule', /gpipe, 1f1b, interleaved, zb-h1 or dualpipe/);
});
