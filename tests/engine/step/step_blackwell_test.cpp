// PyTorch on Blackwell: cuDNN's B200 attention rates, torchtitan's SDPA order on sm100, torch._grouped_mm's rates.
#include <catch2/catch.hpp>

#include <string_view>
#include <tuple>
#include <utility>

#include "tally/hardware/hardware.h"
#include "tally/model/model.h"
#include "tally/step/step.h"
#include "tally/step/step_fsdp.h"
#include "tally/step/step_moe.h"

using namespace tally;

namespace {

// Forward + backward FLOPs over forward + backward time; the backward has 2.5x the forward's FLOPs.
double both(double forward, double backward) { return 3.5 / (1 / forward + 2.5 / backward); }

constexpr double kB200Peak = 2250;     // HGX B200 dense BF16, TFLOP/s (NVIDIA Blackwell datasheet, sparsity halved)
constexpr double kSustained = 0.66;    // FlashAttention-2 in a step over its benchmark (step_attention.cpp, fit half)
constexpr double kCudnnInStep = 0.38;  // cuDNN in a step over its benchmark (step_attention.cpp, torchtitan PR #1196)

}  // namespace

TEST_CASE("attention on B200: cudnn-frontend's SDPA benchmark (cuDNN 9.10.2 against PyTorch's flash backend)") {
    // NVIDIA cudnn-frontend benchmark/sdpa_benchmark_bf16_training/artifacts/sdpa_benchmark_results_NVIDIA_B200.csv
    // (commit f937055, 2025-06-12): causal GQA, head dim 128; pyt_cudnn at 8,192 tokens 1,211.140 TFLOP/s forward
    // and 945.440 backward, pyt_flash_attention 376.059 and 309.174; at 32,768 cuDNN 1,435.072 and 1,132.387.
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 8192) * kB200Peak ==
          Approx(kCudnnInStep * both(1211.140, 945.440)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 8192) * kB200Peak ==
          Approx(kSustained * both(376.059, 309.174)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 32768) * kB200Peak ==
          Approx(kCudnnInStep * both(1435.072, 1132.387)).epsilon(1e-9));
    // The README's single-layer example (cudnn_fe at 16k: 1,370 and 1,135 TFLOP/s) agrees with the table's pyt_cudnn
    // row (1,358.566 and 1,074.499) within 5 %: the table is not one lucky run.
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 16384) * kB200Peak ==
          Approx(kCudnnInStep * both(1370, 1135)).epsilon(0.05));
    // On B200 FlashAttention-2 (Ampere mma.sync, no tcgen05) reaches about a sixth of the peak in the benchmark,
    // half of the share it reaches on H100 (about 35 %, FA3 abstract): cuDNN runs 3.1x faster at 8k.
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 16384) / kSustained ==
          Approx(0.155).margin(0.01));
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 8192) / kCudnnInStep /
              (attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 8192) / kSustained) ==
          Approx(3.1).margin(0.1));
    // Past 131,072 tokens the last measured rate holds; below 512 the 512 rate (tiles underfilled).
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 1 << 20) * kB200Peak ==
          Approx(kCudnnInStep * both(1348.674, 1037.897)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 256) ==
          attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", 512));
    // Transformer Engine's own fused attention on Blackwell keeps Hopper's fractions of the peak (fit half:
    // step_attention.cpp), so the table is PyTorch's only.
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "blackwell", 8192) ==
          attention_efficiency(AttentionKernel::FusedHopper, "hopper", 8192));
}

TEST_CASE("torchtitan's SDPA: cuDNN first on compute capability 10.0, flash elsewhere (torchtitan PR #1196)") {
    CHECK(attention_efficiency(stack_profile("torchtitan").defaults.attention, "blackwell", 8192) * kB200Peak ==
          Approx(kCudnnInStep * both(1211.140, 945.440)).epsilon(1e-9));
    // torchtitan models/attention.py at 6fc499f (the torchao B200 table's commit): CUDNN_ATTENTION inserted first
    // when has_cuda_capability(10, 0); otherwise FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH.
    const StepSwitches& titan = stack_profile("torchtitan").defaults;
    for (double seq : {2048.0, 8192.0, 131072.0}) {
        CHECK(attention_efficiency(titan.attention, "blackwell", seq) ==
              attention_efficiency(AttentionKernel::SdpaCudnnOnBlackwell, "blackwell", seq));
        CHECK(attention_efficiency(titan.attention, "hopper", seq) ==
              attention_efficiency(AttentionKernel::FlashAttention2, "hopper", seq));
        CHECK(attention_efficiency(titan.attention, "ampere", seq) ==
              attention_efficiency(AttentionKernel::FlashAttention2, "ampere", seq));
    }
}

TEST_CASE("torch._grouped_mm on B200: torchao's Llama 4 Scout shapes, BF16 forward + backward by experts per GPU") {
    // pytorch/ao torchao/prototype/moe_training/README.md (commit ff16308), bf16_fwd_bwd_us at M=128,000, N=8,192,
    // K=5,120: 43,140.20 us with 1 group, 39,487.60 with 2, 37,700.70 with 8 (torch 2.10.0a0, one B200).
    const auto b200 = find_hardware("b200");
    const double forward = 2 * 128000.0 * 8192 * 5120;
    for (const auto& [groups, microseconds] : {std::pair{1.0, 43140.20}, {2.0, 39487.60}, {8.0, 37700.70}}) {
        MoeStepShape shape;
        shape.local_experts = groups;
        shape.tokens_per_expert = 128000 / groups;
        shape.expert_ffn = 8192;
        const double seconds =
            moe_grouped_gemm_seconds(shape, 5120, forward, 3, b200.peak("bf16"), b200.memory_bandwidth_bytes_per_s, 2,
                                     torch_grouped_mm_bf16_fraction(groups));
        CHECK(seconds * 1e6 == Approx(microseconds).epsilon(1e-6));
    }
    // A third of the peak with one expert a GPU (747 TFLOP/s), well under the 0.60 the dense BF16 GEMMs reach; flat
    // outside the measured 1-8 groups, between them on the log2 line.
    CHECK(torch_grouped_mm_bf16_fraction(1) == Approx(0.332).margin(0.001));
    CHECK(torch_grouped_mm_bf16_fraction(1) < matmul_peak_fraction("blackwell"));
    CHECK(torch_grouped_mm_bf16_fraction(16) == torch_grouped_mm_bf16_fraction(8));
    CHECK(torch_grouped_mm_bf16_fraction(0.5) == torch_grouped_mm_bf16_fraction(1));
    CHECK(torch_grouped_mm_bf16_fraction(3) > torch_grouped_mm_bf16_fraction(2));
    CHECK(torch_grouped_mm_bf16_fraction(3) < torch_grouped_mm_bf16_fraction(4));
    CHECK(stack_profile("torchtitan").defaults.torch_grouped_mm);
    CHECK_FALSE(stack_profile("megatron-te").defaults.torch_grouped_mm);
}

TEST_CASE("torchtitan's per-op SAC recomputes cuDNN attention on Blackwell: its save list lacks the cuDNN op") {
    // torchtitan models/llama3/infra/parallelize.py _save_list at 6fc499f (the torchao B200 table's commit): mm,
    // _scaled_dot_product_efficient_attention, _scaled_dot_product_flash_attention, reduce_scatter, max; the cuDNN
    // op joined in PR #2095 (b39377f, 2025-12-01). models/attention.py at 6fc499f runs cuDNN first on sm100.
    const StepSwitches& titan = stack_profile("torchtitan").defaults;
    CHECK_FALSE(sdpa_saved_by_op_sac(titan.attention, "blackwell"));
    CHECK(sdpa_saved_by_op_sac(titan.attention, "hopper"));  // flash: saved
    CHECK(sdpa_saved_by_op_sac(AttentionKernel::FlashAttention2, "blackwell"));
    const ModelConfig c = model_from_preset("llama-3-8b");
    CHECK(per_op_sac_extra_passes("attn_scores", c, false, false) == 1);
    CHECK(per_op_sac_extra_passes("attn_values", c, false, false) == 1);
    CHECK(per_op_sac_extra_passes("attn_scores", c, false, true) == 0);
    CHECK(per_op_sac_extra_passes("router", c, false, false) == 0);
    // The published trace of it: torchtitan PR #1196's two logs (Llama 3 8B, 8 B200, llama3_8b.toml: local batch 1,
    // seq 8,192, per-op SAC) peak at 46.39 GiB with flash and 44.59 GiB with cuDNN. What the cuDNN run does not keep
    // is SDPA's output (seq x heads·head_dim, BF16) and its fp32 log-sum-exp (heads x seq) in each of 32 layers:
    // 2.03 GiB against the 1.80 GiB measured.
    const double seq = 8192;
    const double unsaved = static_cast<double>(c.num_layers) *
                           (seq * static_cast<double>(c.q_dim()) * 2 + static_cast<double>(c.num_heads) * seq * 4);
    CHECK(unsaved / (1024.0 * 1024 * 1024) == Approx(46.39 - 44.59).epsilon(0.15));
}

TEST_CASE("cuDNN attention in a torchtitan step on B200: PR #1196's flash to cuDNN gain, 10,902 to 12,211 tokens/s") {
    // torchtitan PR #1196's logs, Llama 3 8B on 8 B200 with llama3_8b.toml (seq 8,192, local batch 1, per-op SAC):
    // step 70 at 10,902 tokens/s a GPU with flash, 12,211 with cuDNN. Only attention differs: flash's op is saved
    // (1 forward + backward = 3.5 forward FLOPs), cuDNN's runs again (4.5).
    const ModelConfig c = model_from_preset("llama-3-8b");
    double forward = 0;  // the attention cores' executed forward FLOPs, every layer, one 8,192-token sequence
    for (const FlopsTerm& term : step_flops(c, 8192, Recompute::None, true).executed.terms)
        if (std::string_view(term.id) == "attn_scores" || std::string_view(term.id) == "attn_values")
            forward += term.forward_per_sequence;
    CHECK(forward == Approx(1.76e13).epsilon(0.01));
    const double peak = kB200Peak * 1e12;
    const double flash =
        3.5 * forward / (attention_efficiency(AttentionKernel::FlashAttention2, "blackwell", 8192) * peak);
    const double cudnn =
        4.5 * forward / (attention_efficiency(stack_profile("torchtitan").defaults.attention, "blackwell", 8192) * peak);
    CHECK(flash - cudnn == Approx(8192 / 10902.0 - 8192 / 12211.0).epsilon(0.02));
    // What the benchmark alone would give: cuDNN 3.1x flash, a gain of 208 ms a step, 2.6x the logs' 80.5 ms.
    CHECK(flash - cudnn * kCudnnInStep > 2.5 * (8192 / 10902.0 - 8192 / 12211.0));
}

TEST_CASE("torchao's MXFP8 grouped GEMM on B200: Llama 4 Scout shapes, quantization included, by experts per GPU") {
    // pytorch/ao torchao/prototype/moe_training/README.md (commit ff16308), M=128,000, N=8,192, K=5,120:
    // scaled_fwd_bwd_us 23,867.00 (1 group), 23,359.00 (2), 23,945.50 (4), 22,170.60 (8); the published speed-ups
    // over bf16 torch._grouped_mm: 1.808x, 1.690x, 1.637x, 1.700x.
    const auto b200 = find_hardware("b200");
    const double forward = 2 * 128000.0 * 8192 * 5120;
    for (const auto& [groups, microseconds, speedup] :
         {std::tuple{1.0, 23867.00, 1.808}, {2.0, 23359.00, 1.690}, {4.0, 23945.50, 1.637}, {8.0, 22170.60, 1.700}}) {
        MoeStepShape shape;
        shape.local_experts = groups;
        shape.tokens_per_expert = 128000 / groups;
        shape.expert_ffn = 8192;
        const auto seconds = [&](const char* dtype, double fraction, double bytes) {
            return moe_grouped_gemm_seconds(shape, 5120, forward, 3, b200.peak(dtype),
                                            b200.memory_bandwidth_bytes_per_s, bytes, fraction);
        };
        const double mx = seconds("fp8", torchao_mxfp8_grouped_mm_fraction(groups), 1);
        CHECK(mx * 1e6 == Approx(microseconds).epsilon(1e-6));
        CHECK(seconds("bf16", torch_grouped_mm_bf16_fraction(groups), 2) / mx == Approx(speedup).epsilon(0.001));
    }
    // Three tenths of the FP8 peak with one expert a GPU, casts inside: well under the 0.50 tally's FP8 GEMMs take.
    CHECK(torchao_mxfp8_grouped_mm_fraction(1) == Approx(0.300).margin(0.001));
    CHECK(torchao_mxfp8_grouped_mm_fraction(16) == torchao_mxfp8_grouped_mm_fraction(8));
    CHECK(torchao_mxfp8_grouped_mm_fraction(0.5) == torchao_mxfp8_grouped_mm_fraction(1));
}
