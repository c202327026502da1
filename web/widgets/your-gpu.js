// "Your GPU" as a device: what the roofline widget measured through WebGPU (webgpu-gemm.js), written as a hardware
// object in the format of content/presets/hardware/*.json (name, architecture, memory_gb, memory_bandwidth_tb_s,
// peak_tflops {fp32, fp16, bf16}), so the engine can take it wherever it takes `hardware`, and a rate measured in
// the browser and one from a datasheet or a calibration run are read the same way.
//
// One device per page, held here: the roofline widget sets it after a measurement (setYourGpu), and any widget
// that offers "your GPU" reads it (yourGpu) and listens for the `tally-your-gpu` event on window to refresh.
// It is not saved: a new page measures again (clocks, power state and other tabs change the figure).

/** The id under which widgets list the measured device beside the presets. */
export const YOUR_GPU_ID = 'your-gpu';

/** Memory the device object carries until the reader types their GPU's (browsers do not report it). */
export const DEFAULT_MEMORY_GB = 8;

let current = null;

/**
 * The hardware object for measured rates: `gemm` {f32, f16?} in FLOP/s (the best GEMM rate per format), `bandwidth`
 * in bytes/s (the copy probe), `memoryGb` as the reader typed it, `name` the adapter's. WGSL has no bf16: the
 * bf16 peak is taken as the f16 rate where f16 was measured (GPUs run both at one rate), else the f32 rate, and
 * `peak_notes` says so. `measured` keeps what the numbers came from.
 */
export function yourGpuDevice({ name, gemm, bandwidth, memoryGb = DEFAULT_MEMORY_GB, detail = {} }) {
  if (!(gemm?.f32 > 0) || !(bandwidth > 0)) throw new Error('a device needs a measured f32 GEMM rate and bandwidth');
  const tflops = (flops) => Number((flops / 1e12).toPrecision(4));
  const peak = { fp32: tflops(gemm.f32) };
  if (gemm.f16 > 0) peak.fp16 = tflops(gemm.f16);
  peak.bf16 = peak.fp16 ?? peak.fp32;
  return {
    id: YOUR_GPU_ID,
    name: name ? `Your GPU (${name})` : 'Your GPU',
    architecture: 'webgpu',
    memory_gb: memoryGb,
    memory_bandwidth_tb_s: Number((bandwidth / 1e12).toPrecision(4)),
    peak_tflops: peak,
    source: `measured in this browser through WebGPU: tiled WGSL GEMM (best of the sizes run) and a streaming copy; memory_gb typed by the reader`,
    peak_notes:
      gemm.f16 > 0
        ? 'bf16 taken as the measured f16 rate (WGSL has no bf16)'
        : 'fp16 not measured (the adapter has no shader-f16); bf16 taken as the f32 rate (WGSL has no bf16)',
    measured: { adapter: name ?? '', ...detail },
  };
}

/** The measured device, or null before a measurement on this page. */
export function yourGpu() {
  return current;
}

/** Sets (or, with null, clears) the measured device and tells the page's widgets. */
export function setYourGpu(device) {
  current = device;
  globalThis.dispatchEvent?.(new CustomEvent('tally-your-gpu', { detail: device }));
}

/** The same device with the reader's memory size (GB); the event goes out again. */
export function setYourGpuMemory(memoryGb) {
  if (!current || !(memoryGb > 0)) return;
  setYourGpu({ ...current, memory_gb: memoryGb });
}
