// The checkpoint_interval method (engine/src/plan/goodput.cpp) in wasm: the same envelopes as native, Daly (2006)'s
// published optimum through the JS API, the MTBF from a published failure count, and refusals naming the field.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, assertSameEnvelopes } from './engine.mjs';

const cases = [
  { mtbf_hours: 24, checkpoint_seconds: 300, restart_seconds: 600 },
  { interruptions: 419, days: 54, observed_gpus: 16384, checkpoint_seconds: 30, restart_seconds: 300 },
  {
    gpu_mtbf_hours: 50000,
    gpus: 4096,
    checkpoint_bytes: 1e12,
    write_bytes_per_s: 1e10,
    restart_seconds: 300,
    interval_seconds: 1800,
    work_hours: 720,
    dollars_per_gpu_hour: 2.5,
  },
  { mtbf_hours: 24, restart_seconds: 600 },
  { mtbf_hours: 24, gpu_mtbf_hours: 1, checkpoint_seconds: 1, restart_seconds: 1 },
];

test('wasm and native give the same checkpoint_interval envelopes', async () => {
  await assertSameEnvelopes(cases.map((args) => ['checkpoint_interval', args]));
});

test("Daly's optimum for M = 6 h, δ = 5 min is his published 57 min, and it beats Young's", async () => {
  const engine = await loadEngine();
  // Daly (2006) fig. 4: M = 6 h, R = 10 min, δ = 5 min, "the new model predicts τopt = 57 min".
  const r = engine.call('checkpoint_interval', { mtbf_hours: 6, checkpoint_seconds: 300, restart_seconds: 600 });
  assert.equal(Math.round(r.daly_interval_seconds / 60), 57);
  assert.equal(r.young_interval_seconds, Math.sqrt(2 * 300 * 6 * 3600));
  assert.ok(r.optimum.efficiency >= r.young.efficiency);
});

test("a published failure count gives the job's MTBF: Llama 3's 419 in 54 days on 16,384 GPUs, about 3 hours", async () => {
  const engine = await loadEngine();
  const base = { interruptions: 419, days: 54, observed_gpus: 16384, checkpoint_seconds: 30, restart_seconds: 300 };
  const r = engine.call('checkpoint_interval', base);
  assert.ok(Math.abs(r.job_mtbf_hours - (54 * 24) / 419) < 1e-9);
  // Four times the GPUs: a quarter of the MTBF, and Young's interval halves (it grows as sqrt(M)).
  const big = engine.call('checkpoint_interval', { ...base, gpus: 65536 });
  assert.ok(Math.abs(big.job_mtbf_hours * 4 - r.job_mtbf_hours) < 1e-9);
  assert.ok(Math.abs(big.young_interval_seconds * 2 - r.young_interval_seconds) < 1e-6);
  assert.ok(big.optimum.efficiency < r.optimum.efficiency);
});

test('checkpoint_interval refuses missing or contradictory inputs, naming the field', async () => {
  const engine = await loadEngine();
  const refused = (args, field) =>
    assert.throws(
      () => engine.call('checkpoint_interval', args),
      (e) => e.field === field,
      JSON.stringify(args),
    );
  refused({ mtbf_hours: 24, restart_seconds: 600 }, 'checkpoint_seconds');
  refused({ mtbf_hours: 24, gpu_mtbf_hours: 1, checkpoint_seconds: 1, restart_seconds: 1 }, 'mtbf_hours');
  refused({ checkpoint_seconds: 1, restart_seconds: 1 }, 'mtbf_hours');
  refused({ gpu_mtbf_hours: 1000, checkpoint_seconds: 1, restart_seconds: 1 }, 'gpus');
  refused({ mtbf_hours: -1, checkpoint_seconds: 1, restart_seconds: 1 }, 'mtbf_hours');
  refused({ mtbf_hours: 24, checkpoint_seconds: 1, restart_seconds: -1 }, 'restart_seconds');
  refused(
    { mtbf_hours: 24, checkpoint_seconds: 1, restart_seconds: 1, dollars_per_gpu_hour: 2 },
    'dollars_per_gpu_hour',
  );
});
