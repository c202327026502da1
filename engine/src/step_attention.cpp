// Fused attention's fraction of the 16-bit dense peak by kernel, GPU generation and sequence length (step.h).
#include <algorithm>
#include <cmath>

#include "tally/step.h"

namespace tally {

namespace {

// FlashAttention-2 reaches 50-73% of A100's peak in the forward pass and less in the backward
// (Dao 2023, "FlashAttention-2", abstract and sec. 4.1): one fused-attention fraction of 0.5 at every length.
constexpr double kFlashAttentionAmpereFraction = 0.50;

// Measured attention throughput on H100 80GB SXM5, BF16, head dim 128, batch·seq = 16k tokens, hidden 2048, in
// TFLOP/s of the FLOPs the kernel needs (causal: half the scores): Shah et al. 2024, "FlashAttention-3"
// (arXiv:2407.08608), Fig. 5 (forward, causal mask) and Fig. 6 (backward, no mask; the paper shows no causal
// backward, so the unmasked rate stands for it), values as labelled on the bars.
constexpr double kTableSeq[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr double kFa2Forward[] = {191, 260, 298, 319, 333, 335};
constexpr double kFa2Backward[] = {214, 260, 291, 310, 318, 322};
// cuDNN fused attention: what Transformer Engine's DotProductAttention runs on Hopper (the megatron-te profile).
constexpr double kCudnnForward[] = {315, 410, 484, 518, 529, 539};
constexpr double kCudnnBackward[] = {305, 408, 465, 499, 518, 516};
// FlashAttention-2 in a training step runs at this fraction of the published kernel rates above (and of the
// Ampere fraction): the benchmarks time the causal forward and the unmasked backward alone at boost clock, a step
// runs the causal backward for hours beside the GEMMs. Chosen on the fit half only: the grid 0.50-1.00 over every
// fit run of content/validation/runs-modern.json, least mean |log(predicted/measured)| at 0.66 (the MosaicML
// flash-attn 2 rows at 16k-64k carry it; 2026-11-25). cuDNN keeps its rates: its fit runs (Megatron-TE) sit at 2k-8k.
constexpr double kFa2SustainedOverBenchmark = 0.66;
// The dense BF16 peak those rates are measured against: H100 SXM5, 989.5 TFLOP/s (NVIDIA H100 datasheet, 2023).
constexpr double kH100SxmPeakTflops = 989.5;
// The backward has 2.5x the forward's FLOPs (FlashAttention-2 sec. 4.1: it recomputes QKᵀ; 5 GEMMs against 2).
constexpr double kBackwardFlopsOverForward = 2.5;

// Piecewise linear in log2(seq) between the table's lengths, flat beyond both ends (the rates level off by 16k;
// below 512 the 512 rate is kept, an upper bound).
double at_seq(const double (&rate)[6], double seq) {
    if (!(seq > kTableSeq[0])) return rate[0];
    for (int i = 1; i < 6; ++i)
        if (seq <= kTableSeq[i]) {
            const double w = std::log2(seq / kTableSeq[i - 1]);  // table lengths double at each step
            return rate[i - 1] + w * (rate[i] - rate[i - 1]);
        }
    return rate[5];
}

// Forward + backward FLOPs over forward + backward time, as a fraction of the H100 peak.
double combined(const double (&forward)[6], const double (&backward)[6], double seq) {
    const double f = at_seq(forward, seq), b = at_seq(backward, seq);
    return (1 + kBackwardFlopsOverForward) / (1 / f + kBackwardFlopsOverForward / b) / kH100SxmPeakTflops;
}

}  // namespace

double attention_efficiency(AttentionKernel kernel, const std::string& architecture, double seq) {
    const bool hopper_or_later = architecture == "hopper" || architecture == "blackwell";
    if (!hopper_or_later) return kFlashAttentionAmpereFraction * kFa2SustainedOverBenchmark;  // cuDNN/FA3 need sm90+
    // Blackwell takes Hopper's fractions of its own peak (no published per-length table for its kernels yet).
    return kernel == AttentionKernel::FusedHopper
               ? combined(kCudnnForward, kCudnnBackward, seq)
               : kFa2SustainedOverBenchmark * combined(kFa2Forward, kFa2Backward, seq);
}

}  // namespace tally
