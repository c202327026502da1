// A device file from a GPU measurement: reads engine/cuda/gemm_roofline's report (schema tally.gpu-measurement/1)
// and prints the hardware preset format (content/presets/hardware/*.json) that --hardware FILE and the API's
// hardware object accept, with the GEMM rate it measured as matmul_peak_fraction.
//   node scripts/bench/calibration-file.mjs build/calibration/gemm_roofline.json > device.json
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Compute capability to the engine's architecture names (hardware.cpp); unknown generations stay unnamed.
function architectureOf(cc) {
  const major = Number(String(cc).split('.')[0]);
  const minor = Number(String(cc).split('.')[1] ?? 0);
  if (major === 8 && minor === 9) return 'ada';
  if (major === 8) return 'ampere';
  if (major === 9) return 'hopper';
  if (major === 10 || major === 12) return 'blackwell';
  return undefined;
}

// The best rate a kernel reached over the sizes measured, only from results that matched the CPU reference.
function best(points, kernel, field) {
  const rates = points
    .filter((p) => p.kernel === kernel && p.correct && Number.isFinite(p[field]))
    .map((p) => p[field]);
  return rates.length ? Math.max(...rates) : undefined;
}

export function calibrationFile(report, { presetsDir = path.join(root, 'content/presets/hardware'), date } = {}) {
  if (report?.schema !== 'tally.gpu-measurement/1')
    throw new Error(`schema must be tally.gpu-measurement/1, got ${JSON.stringify(report?.schema)}`);
  const points = report.points ?? [];
  const bf16 = best(points, 'cublas_gemmex_bf16', 'flops_per_s');
  const fp32 = best(points, 'cublas_sgemm_fp32', 'flops_per_s');
  const hbm = best(points, 'vector_add_fp32', 'bytes_per_s');
  if (!bf16) throw new Error('the report has no correct cublas_gemmex_bf16 point: nothing to calibrate from');
  const name = report.gpu?.name ?? 'unnamed GPU';
  const when = date ?? new Date().toISOString().slice(0, 10);
  const measuredBy = `scripts/bench/calibrate-gpu.sh (engine/cuda/gemm_roofline, cuBLAS) on ${name}, ${when}`;
  const measured = {
    gemm: points
      .filter((p) => p.kind === 'gemm' && p.kernel.startsWith('cublas') && p.correct)
      .map(({ kernel, dtype, m, n, k, flops_per_s }) => ({ kernel, dtype, m, n, k, flops_per_s })),
    hbm_bytes_per_s: hbm ?? null,
  };
  let device;
  if (report.preset) {
    // A known part: its datasheet peaks, links and capacity stay, the GEMMs' measured share of the peak replaces
    // the generation's default.
    device = JSON.parse(readFileSync(path.join(presetsDir, `${report.preset}.json`), 'utf8'));
    device.matmul_peak_fraction = Math.min(1, bf16 / (device.peak_tflops.bf16 * 1e12));
  } else {
    // An unknown part: the measured rates are its peaks (and reached in full); one GPU on its own PCIe link.
    device = {
      name,
      memory_gb: Math.floor(report.gpu.memory_bytes / 1e9), // whole GB; the exact figure is memory_reported_bytes
      memory_bandwidth_tb_s: (hbm ?? NaN) / 1e12,
      peak_tflops: { fp32: fp32 ? fp32 / 1e12 : null, bf16: bf16 / 1e12, fp16: bf16 / 1e12 },
      matmul_peak_fraction: 1,
      // PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s a direction (PCI-SIG base specification 4.0).
      interconnect: {
        gpus_per_node: 1,
        intra_node_gb_s: 31.5,
        network_gb_s: 31.5,
        intra_node_latency_us: 10,
        network_latency_us: 20,
        source: 'not measured: one GPU on a PCIe 4.0 x16 link',
      },
    };
    const architecture = architectureOf(report.gpu?.compute_capability);
    if (architecture) device.architecture = architecture;
  }
  device.id = `calibrated-${(report.preset ?? name).toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  device.name = `${device.name} (measured)`;
  if (Number.isFinite(report.gpu?.memory_bytes)) {
    device.memory_reported_bytes = report.gpu.memory_bytes;
    device.memory_reported_by = 'device';
    device.memory_reported_source = `cudaMemGetInfo total on ${name} (${measuredBy})`;
  }
  device.measured_by = measuredBy;
  device.measured = measured;
  return device;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node scripts/bench/calibration-file.mjs GEMM_ROOFLINE.json');
    process.exit(2);
  }
  try {
    console.log(JSON.stringify(calibrationFile(JSON.parse(readFileSync(file, 'utf8'))), null, 2));
  } catch (e) {
    console.error(`calibration-file: ${file}: ${e.message}`);
    process.exit(2);
  }
}
