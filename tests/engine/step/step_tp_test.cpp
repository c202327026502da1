// Tests of step_tp.cpp: torchtitan's per-op selective activation checkpointing with sequence parallelism replays the
// attention's and the MLP's input all-gathers in the backward, since its _save_list keeps reduce_scatter_tensor but
// no all-gather; its float8 tensorwise plan gathers in FP8 (torchtitan 820504e, models/llama3/parallelize_llama.py;
// torchao 6243040, float8/float8_tensor_parallel.py). The runs below are held out
// (content/validation/runs-modern.json); only their layouts are used, no figure is fitted.
#include <catch2/catch.hpp>

#include <string>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/step/step.h"
#include "tally/step/step_tp.h"

using namespace tally;

TEST_CASE("torchtitan per-op SAC with sequence parallelism: 6 all-gathers and 4 reduce-scatters a layer, full AC 6+6") {
    CHECK(per_op_sac_regathers_per_layer(true) == 2);
    CHECK(per_op_sac_regathers_per_layer(false) == 0);
    // Llama 3 8B on 64 H100, TP 8 with SP (torchtitan's async-TP benchmark layout, June 2025). Forward 2 AG + 2 RS,
    // backward 2 RS + 2 AG of gradients; SAC replays the forward's 2 AG, full AC the forward's 2 AG and 2 RS. The
    // gathers and reduce-scatters move the same bytes over the same ring, so SAC's TP time is 10/12 of full AC's.
    nlohmann::json args = tally_test::modern_run("torchtitan-asynctp-llama3-8b-64gpu-bf16-vanilla")["args"];
    REQUIRE(args["recompute"] == "selective");
    const double sac = tally_test::breakdown_seconds(api::invoke("step_time", args), "tp_comm");
    args["recompute"] = "full";
    const double full = tally_test::breakdown_seconds(api::invoke("step_time", args), "tp_comm");
    CHECK(sac / full == Approx(10.0 / 12.0).epsilon(1e-9));
    // Megatron-style selective recomputation (the generic stack) keeps the gathered inputs: 4 + 4, 8/12 of full.
    args["recompute"] = "selective", args["stack"] = "generic";
    const double generic = tally_test::breakdown_seconds(api::invoke("step_time", args), "tp_comm");
    CHECK(generic / full == Approx(8.0 / 12.0).epsilon(1e-9));
}

TEST_CASE("torchtitan float8 tensorwise TP: all-gathers in FP8, reduce-scatters in BF16; rowwise gathers in BF16") {
    const StepSwitches& titan = stack_profile("torchtitan").defaults;
    CHECK(sp_gather_element_bytes(titan.fp8_tensorwise_sp_gather, "fp8-current-tensorwise", 2, 1) == 1);
    // Rowwise: "all-gather happens in high precision".
    CHECK(sp_gather_element_bytes(titan.fp8_tensorwise_sp_gather, "fp8-rowwise", 2, 1) == 2);
    const StepSwitches& te = stack_profile("megatron-te").defaults;
    CHECK(sp_gather_element_bytes(te.fp8_tensorwise_sp_gather, "fp8-current-tensorwise", 2, 1) == 2);
    // Llama 3 8B, TP 8, per-op SAC: 6 gathers + 4 reduce-scatters; gathers at half the bytes: (6/2 + 4) / 10 of the
    // rowwise plan's TP time, the same layout and bandwidth (latency is per message, so not exactly).
    nlohmann::json args = tally_test::modern_run("torchtitan-asynctp-llama3-8b-64gpu-float8-vanilla")["args"];
    REQUIRE(args["precision"] == "fp8-current-tensorwise");
    const double tensorwise = tally_test::breakdown_seconds(api::invoke("step_time", args), "tp_comm");
    args["precision"] = "fp8-rowwise", args["fp8_all_gather"] = false;
    const double rowwise = tally_test::breakdown_seconds(api::invoke("step_time", args), "tp_comm");
    CHECK(tensorwise / rowwise == Approx(7.0 / 10.0).epsilon(0.01));
}

TEST_CASE("torchtitan TP 8 on H100: the float8/bf16 and rowwise/bf16 speed-ups of the async-TP tables, vanilla TP") {
    // benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md at torchtitan 2887250, vanilla-TP columns: 70B on 256
    // GPUs 597.3 (bf16), 809.8 (float8 tensorwise), 599.6 (float8 rowwise); 8B on 64 GPUs 4378, 5078.1, 3708.5
    // tokens/s per GPU. Ratios between precisions on one layout cancel what the layouts share (the 500 W parts'
    // unknown peak); the FP8 gathers and the rowwise table are what set them. 10 %: FlashAttention-2's sustained
    // rate (step_attention.cpp) leaves attention, which stays BF16, a larger share, so the 8B's ratio lands 8.1 % low.
    const auto tokens = [](const std::string& id) {
        const nlohmann::json args = tally_test::modern_run(id)["args"];
        return api::invoke("step_time", args)["tokens_per_second"].get<double>();
    };
    const std::string t70 = "torchtitan-asynctp-llama3-70b-256gpu-", t8 = "torchtitan-asynctp-llama3-8b-64gpu-";
    const double bf16_70 = tokens(t70 + "bf16-vanilla"), bf16_8 = tokens(t8 + "bf16-vanilla");
    CHECK(tokens(t70 + "float8-vanilla") / bf16_70 == Approx(809.8 / 597.3).epsilon(0.10));
    CHECK(tokens(t8 + "float8-vanilla") / bf16_8 == Approx(5078.1 / 4378).epsilon(0.10));
    CHECK(tokens(t70 + "float8-rowwise-vanilla") / bf16_70 == Approx(599.6 / 597.3).epsilon(0.10));
    CHECK(tokens(t8 + "float8-rowwise-vanilla") / bf16_8 == Approx(3708.5 / 4378).epsilon(0.10));
}

TEST_CASE(
    "torchtitan's sequence-dim collectives: a torch.cat each, two in an FFN forward ~0.18 ms at 8k tokens on H100") {
    // torchtitan PR #437 (2024-07-04): gathering and reduce-scattering on dim 1 (sequence) instead of the folded dim 0
    // "incurs an extra aten.cat after each collective"; "for 8k seq len, batch size 1 on H100, these two cats take
    // about 0.18 ms out of 3 ms of FFN compute (6%)". The PR names no model: at Llama 3 70B's width (h = 8192) the FFN
    // forward's all-gather and reduce-scatter cats move 2 · 2 · 8192 · 8192 · 2 bytes; at the 8B's (4096) half that,
    // 0.10 ms, so the figure is matched at 70B's width only. HBM: the H100 SXM datasheet's 3.35 TB/s at the 80 % of it
    // step.cpp prices every memory-bound pass at (kMemoryBandwidthFraction).
    SpCollectives ffn;
    ffn.gathers = 1, ffn.scatters = 1, ffn.elements = 8192.0 * 8192, ffn.gather_element_bytes = 2;
    ffn.scatter_element_bytes = 2, ffn.tp = 8;
    const double bytes = sp_layout_copy_bytes(stack_profile("torchtitan").defaults.sp_batch_first, ffn);
    CHECK(bytes == Approx(2 * 2 * 8192.0 * 8192 * 2));
    CHECK(bytes / (0.80 * 3.35e12) == Approx(0.18e-3).epsilon(0.15));
    // Megatron's activations are sequence-first [s, b, h]: _gather_along_first_dim needs no rearranging copy.
    CHECK(sp_layout_copy_bytes(stack_profile("megatron-te").defaults.sp_batch_first, ffn) == 0);
    // Async TP fuses both: no cat; the shard copied twice (4/tp of the activation) and the partials summed (1 + 1/tp).
    ffn.fused_gathers = 1, ffn.fused_scatters = 1;
    CHECK(sp_layout_copy_bytes(stack_profile("torchtitan").defaults.sp_batch_first, ffn) ==
          Approx(8192.0 * 8192 * 2 * (4.0 / 8 + 1 + 1.0 / 8)));
}

TEST_CASE("torchtitan TP 8: 10 cats a layer with per-op SAC, 12 with full AC, 6 beside async TP's fused forward") {
    // Llama 3 8B on 64 H100 (96 GB, 500 W: 2.4 TB/s), TP 8, local batch 12 at 8192 tokens: each sequence-parallel
    // collective moves 98,304 · 4096 BF16 elements. Vanilla: 6 all-gathers (2 forward, 2 backward, 2 replayed by
    // SAC) and 4 reduce-scatters, a cat each; async TP fuses the forward's 2 + 2, leaving 6 cats and adding its own
    // shard copies and partial sums. memory_bound carries the difference over 32 layers.
    nlohmann::json args = tally_test::modern_run("torchtitan-asynctp-llama3-8b-64gpu-bf16-vanilla")["args"];
    REQUIRE(args["micro_batch"] == 12);
    const double vanilla = tally_test::breakdown_seconds(api::invoke("step_time", args), "memory_bound");
    args["async_tp"] = true;
    const double async = tally_test::breakdown_seconds(api::invoke("step_time", args), "memory_bound");
    const double E = 12 * 8192.0 * 4096 * 2;  // bytes of one gathered activation
    const double cats = 4 * 2 * E, fused = 2 * 4 * E / 8 + 2 * E * (1 + 1.0 / 8);
    CHECK(vanilla - async == Approx(32 * (cats - fused) / (0.80 * 2.4e12)).epsilon(1e-6));
    // Full AC replays the forward's 2 reduce-scatters too (12 cats against SAC's 10); both replay every elementwise op.
    args["async_tp"] = false, args["recompute"] = "full";
    const double full = tally_test::breakdown_seconds(api::invoke("step_time", args), "memory_bound");
    CHECK(full - vanilla == Approx(32 * 2 * 2 * E / (0.80 * 2.4e12)).epsilon(1e-6));
}

TEST_CASE(
    "torchtitan's wq, wk, wv as three GEMMs: at TP 8 the 128-column key and value GEMMs are bound by their input") {
    // Llama 3 8B, TP 8, local batch 12 at 8192 tokens (the async-TP benchmark's 8B layout) on the 500 W H100s' 989.5
    // TFLOP/s and 2.4 TB/s: q is 4096/8 = 512 columns a rank, k and v 1024/8 = 128. A 98,304 × 128 × 4096 GEMM moves
    // its input (98,304 · 4096 · 2 bytes) for 2 · 98,304 · 128 · 4096 FLOPs: 128 FLOP/byte, under the H100's ridge,
    // so the roofline (Williams et al. 2009) gives its rate from the bytes, at step.cpp's 80 % of HBM bandwidth.
    const double m = 12 * 8192.0, k = 4096, peak = 989.5e12, bw = 2.4e12;
    const double hopper = matmul_peak_fraction("hopper");
    const double kv = matmul_efficiency(m, 128, k, 1, peak, bw, 2, hopper);
    const double bytes = 2 * (m * k + k * 128 + m * 128);
    CHECK(kv == Approx(2 * m * 128 * k / (bytes / (0.80 * bw)) / peak).epsilon(1e-9));
    const double q = matmul_efficiency(m, 512, k, 1, peak, bw, 2, hopper);
    const double fused = matmul_efficiency(m, 768, k, 1, peak, bw, 2, hopper);  // Megatron's linear_qkv
    const double split = separate_qkv_efficiency(512, 128, q, kv);
    CHECK(split < fused);
    CHECK(split == Approx(768 / (512 / q + 256 / kv)));
    // Without TP (1024 columns for k and v) every GEMM reaches the compute roof: three GEMMs cost nothing more.
    CHECK(separate_qkv_efficiency(4096, 1024, matmul_efficiency(m, 4096, k, 1, peak, bw, 2, hopper),
                                  matmul_efficiency(m, 1024, k, 1, peak, bw, 2, hopper)) ==
          Approx(matmul_efficiency(m, 6144, k, 1, peak, bw, 2, hopper)));
}
