// Fused attention's fraction of the 16-bit dense peak by kernel, GPU generation and sequence length (step.h).
#include <algorithm>
#include <cmath>

#include "tally/step/step.h"

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
// The same two backends measured on one B200 (free clock, cuDNN 9.10.2, PyTorch 2.8 NGC 25.05), BF16, causal GQA
// 128 query / 8 KV heads, head dim 128, batch 1, TFLOP/s counted as above (causal halved, backward 2.5x the
// forward): NVIDIA cudnn-frontend benchmark/sdpa_benchmark_bf16_training/artifacts/
// sdpa_benchmark_results_NVIDIA_B200.csv (commit f937055, 2025-06-12), rows pyt_cudnn and pyt_flash_attention.
constexpr double kB200Seq[] = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
constexpr double kB200CudnnForward[] = {66.280,   216.110,  525.475,  897.309, 1211.140,
                                        1358.566, 1435.072, 1428.973, 1348.674};
constexpr double kB200CudnnBackward[] = {43.512,   178.132,  383.705,  709.138, 945.440,
                                         1074.499, 1132.387, 1074.456, 1037.897};
// PyTorch SDPA's flash backend on sm100 is FlashAttention-2's Ampere-instruction kernel: a fifth of cuDNN's rate.
constexpr double kB200FlashForward[] = {60.602, 147.330, 250.977, 327.554, 376.059, 396.971, 406.373, 410.677, 412.019};
constexpr double kB200FlashBackward[] = {41.808,  111.864, 194.686, 266.388, 309.174,
                                         331.025, 342.027, 346.516, 347.340};
// The B200's dense BF16 peak the rates are taken against: HGX B200 (1,000 W), 4.5 PFLOPS with sparsity halved
// (NVIDIA Blackwell datasheet; content/presets/hardware/b200.json). Other Blackwell parts take these fractions.
constexpr double kB200PeakTflops = 2250;
// cuDNN's sm100 kernels under PyTorch SDPA in a training step, over the benchmark rates above: torchtitan PR #1196
// (2025-05-14) logs Llama 3 8B on 8 B200 (llama3_8b.toml at 2d8935c: seq 8,192, local batch 1, per-op SAC, eager)
// at 10,902 tokens/s a GPU with flash and 12,211 with cuDNN, 80.5 ms a step apart, all of it attention (the cuDNN
// op's forward runs twice, step_fsdp.h). With flash at its in-step rate below (kFa2SustainedOverBenchmark x the
// B200 flash table: 287 ms for 3.5 x the 1.76e13 forward FLOPs), cuDNN took 206 ms for 4.5 x: 0.38 of its
// benchmark rate. (With flash at its benchmark rate, 0.72: the logs fix only the difference; flash's model is kept.)
constexpr double kB200CudnnInStepOverBenchmark = 0.38;
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
template <int N>
double at_seq(const double (&lengths)[N], const double (&rate)[N], double seq) {
    if (!(seq > lengths[0])) return rate[0];
    for (int i = 1; i < N; ++i)
        if (seq <= lengths[i]) {
            const double w = std::log2(seq / lengths[i - 1]);  // table lengths double at each step
            return rate[i - 1] + w * (rate[i] - rate[i - 1]);
        }
    return rate[N - 1];
}

// Forward + backward FLOPs over forward + backward time, as a fraction of the peak the table was measured against.
template <int N>
double combined(const double (&lengths)[N], const double (&forward)[N], const double (&backward)[N], double seq,
                double peak_tflops) {
    const double f = at_seq(lengths, forward, seq), b = at_seq(lengths, backward, seq);
    return (1 + kBackwardFlopsOverForward) / (1 / f + kBackwardFlopsOverForward / b) / peak_tflops;
}

}  // namespace

double attention_efficiency(AttentionKernel kernel, const std::string& architecture, double seq) {
    const bool blackwell = architecture == "blackwell";
    // torchtitan puts cuDNN first on compute capability 10.0 and later, flash elsewhere (PR #1196, 2025-05-14;
    // models/attention.py at 6fc499f); from PR #1776 (6a3a9da, 2025-10-09) cuDNN is first on every GPU, after
    // the profile's Hopper benchmarks, so Hopper keeps flash.
    // The B200 table (cuDNN 9.10.2 under PyTorch SDPA) prices PyTorch's backends only; Transformer Engine's own
    // fused attention on Blackwell (Megatron-Bridge 25.11, a newer cuDNN) keeps Hopper's fractions of its peak:
    // chosen on the fit half (median 5.6 % against 6.7 % with the table for both, held-out unchanged; BENCHMARKS.md).
    const bool b200_table = blackwell && kernel != AttentionKernel::FusedHopper;
    if (kernel == AttentionKernel::SdpaCudnnOnBlackwell)
        kernel = blackwell ? AttentionKernel::FusedHopper : AttentionKernel::FlashAttention2;
    const bool hopper_or_later = architecture == "hopper" || blackwell;
    if (!hopper_or_later) return kFlashAttentionAmpereFraction * kFa2SustainedOverBenchmark;  // cuDNN/FA3 need sm90+
    if (b200_table)  // measured on a B200 (kB200Seq): cuDNN's sm100 kernels, or FA2 that runs sm80 instructions
        return kernel == AttentionKernel::FusedHopper
                   ? kB200CudnnInStepOverBenchmark *
                         combined(kB200Seq, kB200CudnnForward, kB200CudnnBackward, seq, kB200PeakTflops)
                   : kFa2SustainedOverBenchmark *
                         combined(kB200Seq, kB200FlashForward, kB200FlashBackward, seq, kB200PeakTflops);
    return kernel == AttentionKernel::FusedHopper
               ? combined(kTableSeq, kCudnnForward, kCudnnBackward, seq, kH100SxmPeakTflops)
               : kFa2SustainedOverBenchmark * combined(kTableSeq, kFa2Forward, kFa2Backward, seq, kH100SxmPeakTflops);
}

}  // namespace tally
