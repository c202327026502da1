// Measuring the reader's GPU for the roofline chart: on request (the "Measure my GPU" button, never at load), the
// WebGPU copy probe and the tiled WGSL GEMM (webgpu-gemm.js) in f32 and, where the adapter has shader-f16, in f16,
// each GEMM checked against the engine's CPU GEMM on the same inputs. A controller beside the chart (roofline.js),
// as roofline-bench.js is for the CPU: it holds what was measured and tells the chart through `ui`; the result
// also becomes "your GPU", a hardware object (your-gpu.js) other widgets can select.
import { webgpuAbsence } from './webgpu-absence.js';
import { yourGpuDevice, setYourGpu, DEFAULT_MEMORY_GB } from './your-gpu.js';

/** A GEMM call longer than this stops the ladder of sizes from growing (a software adapter: minutes at 2048). */
const MAX_CALL_S = 1;

export class RooflineGpu {
  /**
   * `engine` (gemm_run, roofline_custom), `sizes()`: GEMM sizes to try in order, `probe()`: {mib, reps},
   * `intensity`: a roof's ends, `memoryGb()`: the reader's memory size, `ui`: {begin(), step(label), changed(),
   * finish(message), measured(detail)}.
   */
  constructor({ engine, sizes, probe, intensity, memoryGb, ui }) {
    Object.assign(this, { engine, sizes, probe, intensity, memoryGb, ui });
    this.gpu = null;
    this.name = '';
    this.running = false;
    this.reset();
  }

  reset() {
    this.rows = []; // one per GEMM measured: {dtype, n, flops_per_s, intensity, check, ...}
    this.copy = null; // the copy probe's result
    this.roofs = []; // {dtype, peakFlops, bandwidth, ends}
    this.device = null; // the hardware object
  }

  /** Why the GPU cannot be measured on this page (a sentence), or null: checked without asking for an adapter. */
  static absence() {
    return webgpuAbsence();
  }

  async measure() {
    if (this.running) return;
    this.running = true;
    this.reset();
    this.ui.begin();
    try {
      // The GEMM and probe (about 5 KiB gzip) load only now, not with the page.
      const { openGpu, measureBandwidth, measureGemm } = await import('./webgpu-gemm.js');
      this.ui.step('asking the browser for a GPU adapter');
      if (!this.gpu) {
        const gpu = await openGpu();
        // A lost device (driver reset, tab in the background too long) is opened afresh next time.
        gpu.device.lost.then(() => {
          if (this.gpu === gpu) this.gpu = null;
        });
        this.gpu = gpu;
      }
      this.name = this.gpu.name; // kept for the chart if the device is lost later
      const { mib, reps } = this.probe();
      this.ui.step(`bandwidth probe (copy of ${mib} MiB)`);
      this.copy = await measureBandwidth(this.gpu, { mib, reps });
      if (!this.copy.verified) throw new Error('the copy probe did not copy its buffer (the GPU gave wrong data)');
      this.ui.changed();
      const dtypes = ['f32', ...(this.gpu.f16 ? ['f16'] : [])];
      for (const dtype of dtypes) {
        for (const n of this.sizes()) {
          this.ui.step(`GEMM ${dtype}, n = ${n}, and its check against the engine's CPU GEMM`);
          const row = await measureGemm(this.gpu, { n, dtype, engine: this.engine, reps, minSampleMs: 20 });
          this.rows.push(row);
          this.roofs = this.roofsOf();
          this.ui.changed();
          if (row.median_s > MAX_CALL_S) break; // the next size would take minutes on this adapter
        }
      }
      const failed = this.rows.filter((r) => !r.check.ok);
      this.device = this.deviceOf();
      if (this.device) setYourGpu(this.device);
      this.ui.finish(
        failed.length
          ? `done, but ${failed.length} GEMM result${failed.length > 1 ? 's do' : ' does'} not match the CPU reference: their rates are not used`
          : `done: ${this.rows.length} GEMMs on ${this.name || 'the GPU'}, each matching the engine's CPU GEMM`,
      );
      this.ui.measured({
        name: this.name,
        f16: this.gpu.f16,
        copy: this.copy,
        rows: this.rows,
        device: this.device,
      });
    } catch (error) {
      this.ui.finish(`stopped: ${error.message}`);
    } finally {
      this.running = false;
    }
  }

  /** Best checked rate per format. */
  best() {
    const best = {};
    for (const row of this.rows) if (row.check.ok) best[row.dtype] = Math.max(best[row.dtype] ?? 0, row.flops_per_s);
    return best;
  }

  /** One roof per measured format: the best checked GEMM rate over the copy probe's bandwidth. */
  roofsOf() {
    if (!this.copy) return [];
    return Object.entries(this.best()).map(([dtype, peakFlops]) => ({
      dtype,
      peakFlops,
      bandwidth: this.copy.bytes_per_s,
      ends: this.engine.call('roofline_custom', {
        peak_flops_per_s: peakFlops,
        bandwidth_bytes_per_s: this.copy.bytes_per_s,
        intensity: this.intensity,
      }),
    }));
  }

  /** The hardware object of this measurement (null if no GEMM passed its check). */
  deviceOf() {
    const best = this.best();
    if (!best.f32 || !this.copy) return null;
    return yourGpuDevice({
      name: this.name,
      gemm: best,
      bandwidth: this.copy.bytes_per_s,
      memoryGb: this.memoryGb() ?? DEFAULT_MEMORY_GB,
    });
  }
}
