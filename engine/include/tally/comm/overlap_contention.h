// What hidden communication costs the compute it hides behind: NCCL's collective kernels occupy SMs (one thread
// block per channel) and HBM bandwidth while they run, so the GEMMs and elementwise kernels issued beside them run
// slower than alone. The step model counts overlapped collectives as free; this prices the compute they stretch.
// step_time charges it on the NCCL collectives it hides (data-parallel reduction, ZeRO-3 gathers, CP exchange),
// not on tensor-parallel overlap: PyTorch's async TP moves its chunks with copy engines, "dedicated hardware units
// for direct memory access (DMA) which operates independently of SMs" (D. Vega-Myhre, "An illustrated deep-dive
// into ... Async TP", 2025), and Transformer Engine's userbuffers copy the ring exchange with copy engines too
// (initialize_ub's add_ub: use_ce=True); TE's pipelined and bulk overlaps keep 16 SMs (num_sm=16), not charged here.
#pragma once

namespace tally {

// Lee, Oh, Kim, Go, Park, Mahajan, "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed
// Deep Learning: Performance and Power Implications" (arXiv 2507.03114, July 2025), abstract: overlapping
// computation and communication "can result in an average computational slowdown of 18.9%, with a maximum of
// 40.0%", against the same compute with no communication beside it (GPT and LLaMA training on 4 A100, H100,
// MI250 and MI210).
inline constexpr double kOverlapComputeSlowdown = 0.189;

// Extra exposed seconds when `hidden_comm_seconds` of collectives run beside compute that is `slowdown` (a
// fraction, 0-1) slower while they run: in the C seconds a collective is hidden, the compute does only C/(1+s) of
// its work, so C·s/(1+s) more seconds of compute follow. 0 for no hidden communication.
double overlap_contention_seconds(double hidden_comm_seconds, double slowdown = kOverlapComputeSlowdown);

}  // namespace tally
