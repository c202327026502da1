// Whether this page can measure a GPU at all, checked without loading the WebGPU GEMM (webgpu-gemm.js) or asking
// for an adapter: the roofline widget shows it at load and imports the GEMM only when the reader presses Measure.
/** Why WebGPU cannot run here (a sentence), or null when navigator.gpu exists on a secure page. */
export function webgpuAbsence() {
  if (!globalThis.isSecureContext)
    return 'WebGPU needs a secure page (https or localhost); this one is not, so the GPU cannot be measured.';
  if (!globalThis.navigator?.gpu)
    return 'This browser does not offer WebGPU (navigator.gpu is missing: an older browser, or WebGPU turned off), so the GPU cannot be measured.';
  return null;
}
