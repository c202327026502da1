// Tests of issue 24's long-context mechanisms in the step time: attention efficiency by sequence length (the
// FlashAttention-3 paper's H100 rates) and context parallelism (K, V exchange per stack, the dp·cp gradient group,
// the planner's cp search), against published figures from the fit half of content/validation/runs-modern.json.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/step/step.h"
#include "tally/step/step_cp.h"

using namespace tally;
using tally_test::error_field;
using tally_test::fit_run;

namespace {

// A small dense layout on one H100 node: Llama 3 8B, FlashAttention, one sequence per data-parallel rank.
nlohmann::json llama8b(std::int64_t gpus, std::int64_t cp, std::int64_t seq, const char* stack) {
    return {{"model", "llama-3-8b"},
            {"hardware", "h100-sxm"},
            {"gpus", gpus},
            {"cp", cp},
            {"seq", seq},
            {"micro_batch", 1},
            {"global_batch", gpus / cp},
            {"zero", 1},
            {"recompute", "none"},
            {"flash_attention", true},
            {"stack", stack}};
}

}  // namespace

TEST_CASE("attention efficiency by sequence length: the FlashAttention-3 paper's H100 rates (Fig. 5 and 6)") {
    constexpr double peak = 989.5;  // H100 SXM dense BF16, TFLOP/s (NVIDIA datasheet)
    // FlashAttention-2 in a step: 0.66 of its benchmark rates, chosen on the fit half (step_attention.cpp).
    constexpr double sustained = 0.66;
    // FA3 paper Fig. 5 (forward, causal, head dim 128) and Fig. 6 (backward): FlashAttention-2 at 2k 298 and 291
    // TFLOP/s, cuDNN at 16k 539 and 516; the backward has 2.5x the forward's FLOPs (FlashAttention-2 sec. 4.1).
    const auto both = [](double forward, double backward) { return 3.5 / (1 / forward + 2.5 / backward); };
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "hopper", 2048) * peak ==
          Approx(sustained * both(298, 291)).epsilon(1e-9));
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "hopper", 16384) * peak ==
          Approx(both(539, 516)).epsilon(1e-9));
    // FA3 abstract: FlashAttention-2 reaches only about 35 % of H100's peak (in the benchmark).
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "hopper", 16384) / sustained ==
          Approx(0.35).margin(0.03));
    // Short sequences leave the kernel's tiles underfilled: 512 tokens run at about 2/3 of the 16k rate.
    const double fa2_512 = attention_efficiency(AttentionKernel::FlashAttention2, "hopper", 512);
    CHECK(fa2_512 / attention_efficiency(AttentionKernel::FlashAttention2, "hopper", 16384) ==
          Approx(0.64).margin(0.03));
    // Monotone in the length, flat past the table, the fused kernel ahead at every length; Ampere flat: FlashAttention-2
    // reaches 50 % of A100's peak (Dao 2023), 0.66 of it in a step.
    double last = 0;
    for (double seq = 256; seq <= 1 << 20; seq *= 1.5) {
        const double fa2 = attention_efficiency(AttentionKernel::FlashAttention2, "hopper", seq);
        CHECK(fa2 >= last);
        CHECK(attention_efficiency(AttentionKernel::FusedHopper, "hopper", seq) > fa2);
        CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "ampere", seq) == Approx(0.5 * sustained));
        last = fa2;
    }
    CHECK(attention_efficiency(AttentionKernel::FusedHopper, "hopper", 1 << 20) ==
          attention_efficiency(AttentionKernel::FusedHopper, "hopper", 16384));
}

TEST_CASE("FlashAttention-2 in a step: MosaicML MPT at 16k-64k tokens on 8 H100 and A100 (llm-foundry, fit half)") {
    // llm-foundry scripts/train/benchmarking/README.md (commit 4952183): MPT-7B at 65,536 tokens 1,956 tokens/s/GPU
    // on H100 and 1,013 on A100 80GB; MPT-13B at 32,768 tokens 1,976 on H100; attention is 60-70 % of their FLOPs.
    for (const char* id : {"mosaicml-mpt-7b-h100-sxm-8gpu-seq65536", "mosaicml-mpt-7b-a100-80gb-8gpu-seq65536",
                           "mosaicml-mpt-13b-h100-sxm-8gpu-seq32768"}) {
        const nlohmann::json run = fit_run(id);
        const nlohmann::json r = api::invoke("step_time", run["args"]);
        const double predicted = r["tokens_per_second"].get<double>() / run["args"]["gpus"].get<double>();
        const double measured = run["published"]["value"].get<double>();
        INFO(id << ": predicted " << predicted << ", measured " << measured);
        CHECK(std::fabs(predicted - measured) / measured < 0.15);
    }
}

TEST_CASE("context_parallel_layer: the ring hides behind the blocks, the Llama 3 all-gather does not") {
    CpLayerInput in;
    in.cp = 4, in.hop_s = 0.001, in.double_hop_s = 0.002;             // 1 ms a hop, 2 ms with dK, dV
    in.gather_s = 0.003, in.reduce_scatter_s = 0.003;                 // (cp−1)/cp of 4 hops' bytes
    in.attention_forward_s = 0.008, in.attention_backward_s = 0.020;  // 2 ms and 5 ms a block
    in.exchange = CpExchange::Ring;
    CpLayerCost ring = context_parallel_layer(in);
    CHECK(ring.total_s == Approx(3 * 0.001 + 3 * 0.002));  // forward K, V; backward K, V and dK, dV
    CHECK(ring.exposed_s == 0);
    in.exchange = CpExchange::AllGather;  // gather (cp−1)/cp of 4 blocks = 3 ms, forward and twice backward
    const CpLayerCost gather = context_parallel_layer(in);
    CHECK(gather.total_s == Approx(0.009));
    CHECK(gather.exposed_s == gather.total_s);
    in.exchange = CpExchange::AllGatherLocalOverlap;  // 3 ms gathers behind 2 ms / 5 ms local blocks
    const CpLayerCost local = context_parallel_layer(in);
    CHECK(local.exposed_s == Approx(0.001));
    CHECK(local.total_s == Approx(0.003 + 0.003 + 3 * 0.002));  // dK, dV rotate in fp32: twice K, V's bf16 bytes
    in.attention_forward_s = 0.002;  // blocks shorter than a hop: the ring exposes the difference per step
    in.exchange = CpExchange::Ring;
    CHECK(context_parallel_layer(in).exposed_s == Approx(3 * (0.001 - 0.0005)));
    in.cp = 1;
    CHECK(context_parallel_layer(in).total_s == 0);
    CHECK(stack_profile("megatron-te").defaults.cp_exchange == CpExchange::Ring);
    CHECK(stack_profile("torchtitan").defaults.cp_exchange == CpExchange::AllGatherLocalOverlap);
    CHECK(stack_profile("generic").defaults.cp_exchange == CpExchange::AllGather);
}

TEST_CASE("PyTorch context_parallel's bookkeeping: fp32 ring merge, fp32 dK/dV, K and V repeated to the query heads") {
    // Byte counts read off torch/distributed/tensor/experimental/_attention.py (step_cp.cpp): per element of the
    // local output, 38 B per forward ring step after the first and 12 B once; the backward 10 B per step and 10 once
    // for dQ, and for K, V (4 + 10 + 6) once, 13 B per later step and 8 B per step.
    CpMergeInput in{2, CpExchange::AllGatherLocalOverlap, 1, 0, 1};
    CHECK(cp_merge_bytes(in) == Approx(38 + 12 + 4 + 20 + 6));
    in.kv_elements = 1;
    CHECK(cp_merge_bytes(in) == Approx(80 + 20 + 13 + 16));
    in.forward_passes = 2;  // full recomputation merges the forward again
    CHECK(cp_merge_bytes(in) == Approx(80 + 20 + 13 + 16 + 50));
    in.cp = 8, in.forward_passes = 1, in.kv_elements = 0;  // linear in the ring steps
    CHECK(cp_merge_bytes(in) == Approx(38 * 7 + 12 + 4 + 80 + 6));
    in.exchange = CpExchange::Ring;  // TE's ring corrects inside its kernels
    CHECK(cp_merge_bytes(in) == 0);
    in.exchange = CpExchange::AllGatherLocalOverlap, in.cp = 1;
    CHECK(cp_merge_bytes(in) == 0);
    // Llama 3 8B has 32 query and 8 K, V heads: torchtitan's repeat_kv sends 4x the K, V of TE's ring.
    CHECK(cp_kv_repeat(stack_profile("torchtitan").defaults.cp_repeat_kv, 32, 8) == 4);
    CHECK(cp_kv_repeat(stack_profile("megatron-te").defaults.cp_repeat_kv, 32, 8) == 1);
    CHECK(cp_kv_repeat(stack_profile("torchtitan").defaults.cp_repeat_kv, 32, 32) == 1);
    // In a step: torchtitan's HBM work at cp 8 exceeds cp 1's by the merge (the same tokens per GPU), TE's does not.
    const auto memory = [](std::int64_t cp, const char* stack) {
        return tally_test::breakdown_seconds(api::invoke("step_time", llama8b(8, cp, 32768 * cp, stack)),
                                             "memory_bound");
    };
    CHECK(memory(8, "torchtitan") > 1.05 * memory(1, "torchtitan"));
    CHECK(memory(8, "megatron-te") == Approx(memory(1, "megatron-te")).epsilon(1e-9));
}

TEST_CASE("context parallelism in step_time: Llama 3.1 405B with cp 2 on H100 and B200 (NeMo 25.11, fit half)") {
    // Megatron-Bridge performance summary, 25.11: 292 tokens/s/GPU on 1,024 H100 (FP8 current scaling), 624 on 128
    // B200 (MXFP8), both TP 4-8, PP 8, CP 2, seq 8192 (content/validation/runs-modern.json). No constant of the CP
    // model was chosen against them: the ring exchange and the attention rates come from their sources. The summary
    // states no TP overlap, so they run at Megatron-Core's default (off): -19.5 % and -9.8 % (-2.5 %, -0.5 % when
    // megatron-te hid all TP traffic), inside a quarter.
    for (const char* id : {"nvidia-bridge-2511-llama3-1-405b-h100-sxm-fp8-current-scaling-1024gpu",
                           "nvidia-bridge-2511-llama3-1-405b-b200-mxfp8-128gpu"}) {
        const nlohmann::json run = fit_run(id);
        REQUIRE(run["args"]["cp"] == 2);
        const nlohmann::json r = api::invoke("step_time", run["args"]);
        const double predicted = r["tokens_per_second"].get<double>() / run["args"]["gpus"].get<double>();
        const double measured = run["published"]["value"].get<double>();
        INFO(id << ": predicted " << predicted << ", measured " << measured);
        CHECK(std::fabs(predicted - measured) / measured < 0.25);
        CHECK(predicted < measured);  // slower than measured: the exposed TP traffic the runs may have hidden
        CHECK(r["layout"]["cp"] == 2);
        CHECK(r["dp"].get<std::int64_t>() * 2 * run["args"]["tp"].get<std::int64_t>() *
                  run["args"]["pp"].get<std::int64_t>() ==
              run["args"]["gpus"].get<std::int64_t>());
        CHECK(tally_test::breakdown_seconds(r, "cp_comm_hidden") >
              0);  // TE's ring overlaps the K, V blocks with attention
    }
}

TEST_CASE("context parallelism in step_time: per-rank work, memory, the dp·cp gradient group and the exchange") {
    // Two GPUs on one sequence of 65,536 tokens: each holds half the tokens and half the causal pairs.
    const nlohmann::json one = api::invoke("step_time", llama8b(1, 1, 32768, "megatron-te"));
    const nlohmann::json two = api::invoke("step_time", llama8b(2, 2, 65536, "megatron-te"));
    CHECK(two["memory_bytes"].get<double>() <
          api::invoke("step_time", llama8b(2, 1, 65536, "megatron-te"))["memory_bytes"].get<double>());
    // Gradients are all-reduced over the cp ranks though dp is 1 (Megatron-Core's dp·cp group).
    CHECK(two["dp"] == 1);
    CHECK(tally_test::breakdown_seconds(two, "dp_comm_hidden") + tally_test::breakdown_seconds(two, "dp_comm") > 0);
    // Twice the tokens over twice the GPUs, attention twice as long per token: slower per token than cp 1 at 32k.
    CHECK(two["tokens_per_second"].get<double>() / 2 < one["tokens_per_second"].get<double>());
    // The exposed all-gather (generic) costs more than TE's ring, which hides on NVLink at this length.
    const nlohmann::json generic = api::invoke("step_time", llama8b(2, 2, 65536, "generic"));
    CHECK(tally_test::breakdown_seconds(two, "cp_comm") == 0);
    CHECK(tally_test::breakdown_seconds(generic, "cp_comm") > 0);
    // Unbalanced chunks: the last rank scores (2cp−1)/cp of the mean pairs (context::causal_work), and waits on it.
    nlohmann::json naive = llama8b(4, 4, 65536, "megatron-te");
    const double balanced = api::invoke("step_time", naive)["step_seconds"].get<double>();
    naive["cp_load_balance"] = false;
    CHECK(api::invoke("step_time", naive)["step_seconds"].get<double>() > 1.2 * balanced);
}

TEST_CASE("context parallelism: bad layouts are InputErrors naming the field") {
    nlohmann::json args = llama8b(2, 2, 65536, "megatron-te");
    args["seq"] = 65538;  // 2·cp must divide seq
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "cp");
    args = llama8b(2, 2, 65536, "megatron-te");
    args["gpus"] = 3;
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "gpus");
    args = llama8b(2, 2, 65536, "megatron-te");
    args["flash_attention"] = false;
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "cp");
}

TEST_CASE("the planner tries context parallelism from seq 32768 on, and a given cp only") {
    nlohmann::json args{{"model", "llama-3-8b"}, {"hardware", "h100-sxm"},  {"gpus", 16}, {"seq", 131072},
                        {"global_batch", 16},    {"flash_attention", true}, {"top", 100}};
    nlohmann::json p = api::invoke("plan", args);
    bool some_cp = false;
    for (const auto& row : p["best"]) some_cp = some_cp || row["layout"].contains("cp");
    CHECK(some_cp);
    args["seq"] = 8192;
    p = api::invoke("plan", args);
    for (const auto& row : p["best"]) CHECK_FALSE(row["layout"].contains("cp"));
    args["seq"] = 131072;
    args["cp"] = 4;
    p = api::invoke("plan", args);
    for (const auto& row : p["best"]) CHECK(row["layout"]["cp"] == 4);
}
