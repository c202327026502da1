// Attention on Blackwell: cudnn-frontend's measured B200 rates and torchtitan's SDPA backend order on sm100.
#include <catch2/catch.hpp>

#include "tally/step.h"

using namespace tally;

namespace {

// Forward + backward FLOPs over forward + backward time; the backward has 2.5x the forward's FLOPs.
double both(double forward, double backward) { return 3.5 / (1 / forward + 2.5 / backward); }

constexpr double kB200Peak = 2250;   // HGX B200 dense BF16, TFLOP/s (NVIDIA Blackwell datasheet, sparsity halved)
constexpr double kSustained = 0.66;  // FlashAttention-2 in a step over its benchmark (step_attention.cpp, fit half)

}  // namespace

TEST_CASE("attention on B200: cudnn-frontend's SDPA benchmark (cuDNN 9.10.2 against PyTorch's flash backend)") {
    // NVIDIA cudnn-frontend benchmark/sdpa_benchmark_bf16_training/artifacts/sdpa_benchmark_results_NVIDIA_B200.csv
    // (commit f937055, 2025-06-12): causal GQA, head dim 128; pyt_cudnn at 8,192 tokens 1,211.140 TFLOP/s forward
    // and 945.440 backward, pyt_flash_attention 376.059 and 309.174; at 32,768 cuDNN 1,435.072 and 1,132.387.
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 8192) * kB200Peak ==
          Approx(both(1211.140, 945.440)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 8192) * kB200Peak ==
          Approx(kSustained * both(376.059, 309.174)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 32768) * kB200Peak ==
          Approx(both(1435.072, 1132.387)).epsilon(1e-9));
    // The README's single-layer example (cudnn_fe at 16k: 1,370 and 1,135 TFLOP/s) agrees with the table's pyt_cudnn
    // row (1,358.566 and 1,074.499) within 5 %: the table is not one lucky run.
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 16384) * kB200Peak ==
          Approx(both(1370, 1135)).epsilon(0.05));
    // On B200 FlashAttention-2 (Ampere mma.sync, no tcgen05) reaches about a sixth of the peak in the benchmark,
    // half of the share it reaches on H100 (about 35 %, FA3 abstract): cuDNN runs 3.1x faster at 8k.
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 16384) / kSustained ==
          Approx(0.155).margin(0.01));
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 8192) /
              (attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 8192) / kSustained) ==
          Approx(3.1).margin(0.1));
    // Past 131,072 tokens the last measured rate holds; below 512 the 512 rate (tiles underfilled).
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 1 << 20) * kB200Peak ==
          Approx(both(1348.674, 1037.897)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 256) ==
          attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 512));
}

TEST_CASE("torchtitan's SDPA: cuDNN first on compute capability 10.0, flash elsewhere (torchtitan PR #1196)") {
    // torchtitan models/attention.py at 6fc499f (the torchao B200 table's commit): CUDNN_ATTENTION inserted first
    // when has_cuda_capability(10, 0); otherwise FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH.
    const StackProfile& titan = stack_profile("torchtitan");
    for (double seq : {2048.0, 8192.0, 131072.0}) {
        CHECK(attention_efficiency(titan.attention, "blackwell", seq) ==
              attention_efficiency(AttentionKernel::FusedHopper, "blackwell", seq));
        CHECK(attention_efficiency(titan.attention, "hopper", seq) ==
              attention_efficiency(AttentionKernel::FlashAttention2, "hopper", seq));
        CHECK(attention_efficiency(titan.attention, "ampere", seq) ==
              attention_efficiency(AttentionKernel::FlashAttention2, "ampere", seq));
    }
}
