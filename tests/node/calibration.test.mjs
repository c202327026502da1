// scripts/bench/calibrate-gpu.sh and scripts/bench/calibration-file.mjs on a machine without a GPU: the script skips
// with its reason, the converter turns a gemm_roofline report into a device file, and that file is a hardware
// argument the engine accepts (API and --hardware FILE) whose measured GEMM rate sets the step's matmul time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root, nativeCli, loadEngine } from './engine.mjs';
import { calibrationFile } from '../../scripts/bench/calibration-file.mjs';

const sample = JSON.parse(readFileSync(path.join(root, 'tests/fixtures/hardware/gemm-roofline-sample.json'), 'utf8'));
const stepArgs = { model: 'llama-3-8b', gpus: 8, seq: 4096, micro_batch: 1, global_batch: 64, zero: 1 };
const matmul = (r) => r.breakdown.find((b) => b.id === 'matmul').seconds;

test('calibrate-gpu.sh exits 0 and says why when the machine has no GPU', () => {
  const hasGpu = spawnSync('sh', ['-c', 'nvidia-smi -L 2>/dev/null | grep -q "^GPU "']).status === 0;
  const run = spawnSync(
    'bash',
    [path.join(root, 'scripts/bench/calibrate-gpu.sh'), '--out', mkdtempSync(path.join(tmpdir(), 'tally-cal-'))],
    { encoding: 'utf8' },
  );
  if (hasGpu) return; // a machine with a GPU measures it instead (minutes); nothing to assert here
  assert.equal(run.status, 0);
  assert.match(run.stdout, /no NVIDIA GPU .* skipped/);
});

test('a known part keeps its datasheet and takes the best correct cuBLAS bf16 rate as its matmul fraction', () => {
  const device = calibrationFile(sample, { date: '2026-12-02' });
  const preset = JSON.parse(readFileSync(path.join(root, 'content/presets/hardware/h100-sxm.json'), 'utf8'));
  assert.equal(device.peak_tflops.bf16, preset.peak_tflops.bf16);
  // 6.5e14 of 9.895e14: the 16384 point (9e14) did not match its reference and is left out.
  assert.equal(device.matmul_peak_fraction, 6.5e14 / 9.895e14);
  assert.equal(device.memory_reported_bytes, 85520809984);
  assert.match(device.measured_by, /calibrate-gpu\.sh .* NVIDIA H100 80GB HBM3, 2026-12-02/);
  assert.deepEqual(
    device.measured.gemm.map((g) => g.m),
    [4096, 8192, 8192],
  );
  assert.throws(() => calibrationFile({ ...sample, schema: 'x' }), /schema must be tally\.gpu-measurement\/1/);
  assert.throws(() => calibrationFile({ ...sample, points: [] }), /no correct cublas_gemmex_bf16/);
});

test("the device file is a hardware argument: the measured fraction sets step_time's matmul time", async () => {
  const engine = await loadEngine();
  const device = calibrationFile(sample, { date: '2026-12-02' });
  const fast = engine.call('step_time', { ...stepArgs, hardware: { ...device, matmul_peak_fraction: 0.6 } });
  const slow = engine.call('step_time', { ...stepArgs, hardware: { ...device, matmul_peak_fraction: 0.5 } });
  // The GEMMs' time goes as 1 / fraction (0.6 / 0.5 = 1.2); the attention kernels in the same line keep their rates.
  const ratio = matmul(slow) / matmul(fast);
  assert.ok(ratio > 1.1 && ratio <= 1.2 + 1e-9, `${ratio}`);
  assert.equal(slow.hardware, device.id);
  // memory_budget and inference take the same object.
  const budget = engine.call('memory_budget', { model: 'llama-3-8b', hardware: device });
  assert.equal(budget.capacity_bytes, 85520809984);
  const serve = engine.call('inference', { model: 'llama-3-8b', context: 4096, hardware: device });
  assert.equal(serve.memory_bandwidth_bytes_per_s, device.memory_bandwidth_tb_s * 1e12);
  assert.equal(serve.hardware.name, device.name);
  assert.throws(
    () => engine.call('memory_budget', { model: 'llama-3-8b', hardware: { ...device, matmul_peak_fraction: 1.5 } }),
    (e) => e.field === 'matmul_peak_fraction' && /\(0, 1\]/.test(e.message),
  );
  // The CLI reads the same file with --hardware FILE.json and prints the same step.
  const dir = mkdtempSync(path.join(tmpdir(), 'tally-device-'));
  const file = path.join(dir, 'device.json');
  writeFileSync(file, JSON.stringify({ ...device, matmul_peak_fraction: 0.5 }));
  const cli = JSON.parse(
    execFileSync(
      nativeCli,
      [
        'step',
        '--model',
        'llama-3-8b',
        '--hardware',
        file,
        '--gpus',
        '8',
        '--tp',
        '1',
        '--pp',
        '1',
        '--seq',
        '4096',
        '--global-batch',
        '64',
        '--zero',
        '1',
        '--json',
      ],
      { encoding: 'utf8' },
    ),
  );
  assert.equal(cli.step_seconds, slow.step_seconds);
});
