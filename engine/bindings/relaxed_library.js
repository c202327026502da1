// Emscripten JS library (linked with --js-library): the engine's imports for the relaxed-SIMD kernel.
// They forward to the relaxed-SIMD module (engine/kernels/relaxed/gemm_relaxed.cpp -> tally-relaxed.wasm) once a
// host has instantiated it on this engine's memory and set Module.tallyRelaxed to its exports (see
// web/widgets/roofline-worker.js); until then simd-relaxed reports itself unavailable. One call per GEMM,
// not per micro-kernel, crosses JavaScript.
mergeInto(LibraryManager.library, {
  tally_relaxed_available: function () {
    return Module['tallyRelaxed'] ? 1 : 0;
  },
  tally_relaxed_gemm: function (m, n, k, a, b, c, workspace) {
    Module['tallyRelaxed']['gemm'](m, n, k, a, b, c, workspace);
  },
  tally_relaxed_workspace_floats: function (m, n, k) {
    return Module['tallyRelaxed']['gemm_workspace_floats'](m, n, k);
  },
  tally_relaxed_peak_loop: function (iters) {
    return Module['tallyRelaxed']['peak_loop'](iters);
  },
  tally_relaxed_peak_flops_per_iter: function () {
    return Module['tallyRelaxed']['peak_flops_per_iter']();
  },
});
