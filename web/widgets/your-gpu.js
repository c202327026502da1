// "Your GPU" as a device: what the roofline widget measured through WebGPU (webgpu-gemm.js), written as a hardware
// object in the format of content/presets/hardware/*.json (name, memory_gb, memory_bandwidth_tb_s, peak_tflops
// {fp32, fp16, bf16}, source, interconnect; architecture, optional there, is left out), so the engine can take it wherever it takes `hardware`, and a rate measured in
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
 * A browser cannot measure links, and the engine's step time needs interconnect figures even for one card. Your GPU
 * is one card in one machine (gpus_per_node 1); its only link is taken as PCIe 4.0 x16, 16 GT/s × 16 lanes with
 * 128b/130b coding, each way, for both the node's and the network's link, with the presets' order-of-magnitude
 * latencies. These figures matter only for layouts of more than one GPU.
 */
const PCIE4_X16_GB_S = (16 * 16 * 128) / 130 / 8;
export const SINGLE_CARD_INTERCONNECT = {
  gpus_per_node: 1,
  intra_node_gb_s: Number(PCIE4_X16_GB_S.toPrecision(3)),
  network_gb_s: Number(PCIE4_X16_GB_S.toPrecision(3)),
  intra_node_latency_us: 10,
  network_latency_us: 20,
  source:
    'not measured (a browser cannot): one card per machine, its PCIe 4.0 x16 link (16 GT/s x 16 lanes, 128b/130b, each way) for both links; latencies an order-of-magnitude assumption, as in the presets',
};

/**
 * The hardware object for measured rates, in the presets' format and nothing else: `gemm` {f32, f16?} in FLOP/s
 * (the best checked GEMM rate per format), `bandwidth` in bytes/s (the copy probe), `memoryGb` as the reader
 * typed it, `name` the adapter's. WGSL has no bf16: the bf16 peak is taken as the f16 rate where f16 was measured
 * (GPUs run both at one rate), else the f32 rate; `source` says so. The interconnect is SINGLE_CARD_INTERCONNECT.
 * No architecture either: the engine knows only datasheet families (ampere ... cdna4) and would apply that family's
 * fraction of peak; without one it applies its generic fraction to the measured rate.
 */
export function yourGpuDevice({ name, gemm, bandwidth, memoryGb = DEFAULT_MEMORY_GB }) {
  if (!(gemm?.f32 > 0) || !(bandwidth > 0)) throw new Error('a device needs a measured f32 GEMM rate and bandwidth');
  const tflops = (flops) => Number((flops / 1e12).toPrecision(4));
  const peak = { fp32: tflops(gemm.f32) };
  if (gemm.f16 > 0) peak.fp16 = tflops(gemm.f16);
  peak.bf16 = peak.fp16 ?? peak.fp32;
  return {
    name: name ? `Your GPU (${name})` : 'Your GPU',
    memory_gb: memoryGb,
    memory_bandwidth_tb_s: Number((bandwidth / 1e12).toPrecision(4)),
    peak_tflops: peak,
    interconnect: SINGLE_CARD_INTERCONNECT,
    source: `measured in this browser through WebGPU: tiled WGSL GEMM (best checked rate over the sizes run; ${
      gemm.f16 > 0
        ? 'bf16 taken as the measured f16 rate, WGSL has no bf16'
        : 'no shader-f16 on this adapter, so fp16 not measured; bf16 taken as the f32 rate, WGSL has no bf16'
    }) and a streaming copy (read + write bytes over time); memory_gb typed by the reader, browsers do not report it`,
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
