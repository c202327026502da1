// Tests of the mixture-of-experts step-time pieces (engine/src/step/step_moe.cpp, issue 24): per-expert grouped-GEMM
// shapes and expert tensor parallelism folded over tp, the dispatch synchronisation, and the NVIDIA Megatron-Bridge
// 25.11 MoE rows of the fit half of content/validation/runs-modern.json.
#include <catch2/catch.hpp>

#include "tally/comm/collectives.h"

#include <cmath>
#include <fstream>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/step/step.h"
#include "tally/step/step_moe.h"

using namespace tally;
using tally_test::error_field;
using tally_test::fit_run;
using tally_test::preset;

namespace {

double predicted_per_gpu(const nlohmann::json& run) {
    const nlohmann::json r = api::invoke("step_time", run["args"]);
    return r["tokens_per_second"].get<double>() / run["args"]["gpus"].get<double>();
}

ModelConfig qwen3_30b_a3b() {
    // Qwen3-30B-A3B config.json: hidden 2048, 48 layers, 128 experts, top-8, moe_intermediate_size 768.
    return resolve_model(fit_run("nvidia-bridge-2511-qwen3-30b-a3b-b200-mxfp8-8gpu")["args"]);
}

}  // namespace

TEST_CASE("the grouped expert GEMM runs at the per-expert shape: tokens·k·ep/E rows per expert (Qwen3-30B-A3B)") {
    // Megatron-Bridge 25.11, DGX-B200 row Qwen3_30B_a3B: 8 GPUs, EP 8, MBS 1, sequence 4096 (ETP 1 = TP 1).
    const ModelConfig c = qwen3_30b_a3b();
    const Interconnect ic = find_hardware("b200").interconnect;
    const MoeStepShape s = moe_step_shape(c, ic, {4096, 1, 8, 1, 8, 0, 2, 0.77});
    CHECK(s.local_experts == 16);                        // 128 / 8
    CHECK(s.tokens_per_expert == 4096.0 * 8 * 8 / 128);  // 2048 rows: the M of each expert's GEMMs
    CHECK(s.expert_ffn == 768);
    CHECK(s.dispatched_rows == 4096.0 * 8);
    // On one GPU (EP 1) each of the 128 experts gets 4096·8/128 = 256 rows: a 256×768×2048 BF16 GEMM reads its
    // expert's weights for few rows and is memory-bound on B200 (175 FLOP/byte against the 211 that 60 % of the
    // 2.25 PFLOP/s peak over 80 % of 8 TB/s needs), so the same FLOPs take longer than at EP 8.
    const MoeStepShape alone = moe_step_shape(c, ic, {4096, 1, 1, 1, 8, 0, 2, 0.77});
    CHECK(alone.tokens_per_expert == 256);
    const Hardware b200 = find_hardware("b200");
    const auto seconds = [&](const MoeStepShape& shape) {
        return moe_grouped_gemm_seconds(shape, 2048, 1e12, 3, b200.peak("bf16"), b200.memory_bandwidth_bytes_per_s, 2,
                                        0.6);
    };
    CHECK(seconds(alone) > 1.15 * seconds(s));
}

TEST_CASE("expert tensor parallelism folds EP over tp·dp: Qwen3-235B-A22B on 256 H100 with TP 2, EP 32, ETP 1") {
    // Megatron-Bridge 25.11 DGX-H100 row Qwen3_235B_a22B: TP 2, PP 8, EP 32 on 256 GPUs (dp 16); its performance
    // config sets expert_tensor_parallel_size 1 (scripts/performance/configs/qwen3/workload_base_configs.py, v0.2.0).
    nlohmann::json run = fit_run("nvidia-bridge-2511-qwen3-235b-a22b-h100-sxm-fp8-current-scaling-256gpu");
    REQUIRE(run["args"]["etp"] == 1);
    const double per_gpu = predicted_per_gpu(run);
    CHECK(api::invoke("step_time", run["args"])["layout"]["etp"] == 1);  // the folded layout is echoed
    const double published = run["published"]["value"].get<double>();    // 1,575 tokens/s/GPU
    CHECK(std::fabs(per_gpu / published - 1) < 0.25);
    // Each GPU computes its 1/tp share of the tokens over whole experts: tokens·k/2 rows over 128/32 = 4 experts.
    const ModelConfig c = resolve_model(run["args"]);
    const MoeStepShape s = moe_step_shape(c, find_hardware("h100-sxm").interconnect, {4096, 2, 32, 1, 8, 0, 2, 0.77});
    CHECK(s.tokens_per_expert == 4096.0 * 8 / 2 / 4);
    CHECK(s.expert_ffn == 1536);
    // Without folding (etp = tp = 2) ep·etp = 64 does not divide tp·dp = 32: refused, naming ep.
    run["args"].erase("etp");
    CHECK(error_field([&] { api::invoke("step_time", run["args"]); }) == "ep");
    run["args"]["etp"] = 3;
    CHECK(error_field([&] { api::invoke("step_time", run["args"]); }) == "etp");
}

TEST_CASE("a dropless dispatcher pays a host synchronisation per MoE layer; a fixed capacity does not") {
    const ModelConfig c = qwen3_30b_a3b();
    const Interconnect ic = find_hardware("b200").interconnect;
    const MoeStepShape dropless = moe_step_shape(c, ic, {4096, 1, 8, 1, 8, 0, 2, 0.77});
    const MoeStepShape capped = moe_step_shape(c, ic, {4096, 1, 8, 1, 8, 1.25, 2, 0.77});
    CHECK(dropless.sync_seconds > 0);
    CHECK(capped.sync_seconds == 0);
    // Without expert parallelism the grouped GEMM still needs its per-expert row counts on the host.
    CHECK(moe_step_shape(c, ic, {4096, 1, 1, 1, 8, 0, 2, 0.77}).sync_seconds == dropless.sync_seconds);
    CHECK(capped.tokens_per_expert == 1.25 * dropless.tokens_per_expert);  // padded slots are computed
    CHECK(capped.all_to_all_seconds > dropless.all_to_all_seconds);        // and sent
    CHECK(error_field([&] { moe_step_shape(c, ic, {4096, 1, 6, 1, 8, 0, 2, 0.77}); }) == "ep");
}

TEST_CASE("DeepSeek-V3's routed experts are 8 of the 9 experts of its 58 MoE layers beside 3 dense layers") {
    // DeepSeek-V3 technical report (arXiv:2412.19437, sec. 4.2): 61 layers, the first 3 dense (FFN 18,432), then 1
    // shared and 256 routed experts of width 2,048, 8 routed per token.
    const ModelConfig c = preset("deepseek-v3");
    const double share = 8.0 * 2048 * 58 / (2048.0 * 9 * 58 + 18432.0 * 3);
    CHECK(moe_routed_flops_share(c) == Approx(share).epsilon(1e-12));
    CHECK(moe_routed_flops_share(preset("llama-3-8b")) == 0);
}

TEST_CASE("the NVIDIA Megatron-Bridge 25.11 MoE rows on NVL72 racks come within 20 %") {
    // Published tokens/s/GPU (Megatron-Bridge docs/performance-summary-archive.md, 25.11): DeepSeek-V3 w/o MTP BF16
    // on 256 GB200 3,139 and FP8-MX on 256 GB300 4,357; Qwen3-30B-A3B FP8-MX on 8 GB300 28,934.
    for (const char* id : {"nvidia-bridge-2511-deepseekv3-gb200-nvl72-bf16-256gpu",
                           "nvidia-bridge-2511-deepseekv3-gb300-nvl72-mxfp8-256gpu",
                           "nvidia-bridge-2511-qwen3-30b-a3b-gb300-nvl72-mxfp8-8gpu"}) {
        const nlohmann::json run = fit_run(id);
        INFO(id);
        CHECK(std::fabs(predicted_per_gpu(run) / run["published"]["value"].get<double>() - 1) < 0.20);
    }
}

TEST_CASE("step_time takes its FLOPs from the model's attention kind: MLA (DeepSeek-V3), sliding windows (gpt-oss)") {
    // The NVIDIA 25.11 rows' layouts: DeepSeek-V3 on 256 GB200 (PP 4, VP 4, EP 64), gpt-oss-120b on 64 GB200 (EP 64).
    for (const char* id : {"nvidia-bridge-2511-deepseekv3-gb200-nvl72-bf16-256gpu",
                           "nvidia-bridge-2511-gpt-oss-120b-gb200-nvl72-bf16-64gpu"}) {
        INFO(id);
        const nlohmann::json run = fit_run(id);
        const ModelConfig c = resolve_model(run["args"]);
        const nlohmann::json r = api::invoke("step_time", run["args"]);
        FlopsInput in;
        in.seq = run["args"]["seq"].get<std::int64_t>();
        in.flash_attention = true;
        const FlopsResult f = count_flops(c, in);
        const double gpus = run["args"]["gpus"].get<double>();
        // MFU's numerator is count_flops' model FLOPs per token for this attention kind (MLA projections, windows).
        CHECK(r["model_flops_per_s_per_gpu"].get<double>() * gpus / r["tokens_per_second"].get<double>() ==
              Approx(f.model_per_token).epsilon(1e-9));
        double exposed = 0;
        for (const auto& part : r["breakdown"])
            if (part["exposed"].get<bool>()) exposed += part["seconds"].get<double>();
        CHECK(exposed == Approx(r["step_seconds"].get<double>()));
    }
    // gpt-oss-120b's 18 sliding-window layers (window 128) execute far fewer score entries than full attention would
    // at 8,192 tokens: the same model with every layer full is slower.
    nlohmann::json run = fit_run("nvidia-bridge-2511-gpt-oss-120b-gb200-nvl72-bf16-64gpu");
    ModelConfig full = resolve_model(run["args"]);
    REQUIRE(full.num_sliding_layers == 18);
    const Hardware hw = find_hardware("gb200-nvl72");
    const ModelConfig windowed = full;
    full.num_sliding_layers = 0, full.sliding_window = 0;
    StepLayout l;
    l.setup.gpus = 64, l.setup.ep = 64, l.setup.seq = 8192, l.setup.micro_batch = 1, l.setup.global_batch = 1280;
    l.setup.flash_attention = true;
    l.stack = "megatron-te";
    CHECK(step_time(full, hw, l).step_seconds > 1.05 * step_time(windowed, hw, l).step_seconds);
}

TEST_CASE("an all-to-all across nodes gets one card per GPU: DeepEP's 43-58 GB/s RDMA at EP 16-64 on 50 GB/s cards") {
    // deepseek-ai/DeepEP docs/legacy.md, "Normal kernels with NVLink and RDMA forwarding": H800 with one 400 Gb/s
    // CX7 card (~50 GB/s) each, 4096 tokens, hidden 7168, top-8, FP8 dispatch: 43, 58 and 51 GB/s RDMA bottleneck
    // bandwidth at EP 16, 32 and 64; 153 GB/s over NVLink at EP 8.
    const Interconnect ic = find_hardware("h100-sxm").interconnect;
    const double bytes = 4096.0 * 8 * 7168;  // FP8: one byte per element
    for (const std::int64_t ep : {16, 32, 64}) {
        const double off_node = bytes * static_cast<double>(ep - 8) / static_cast<double>(ep);
        const double rdma = off_node / all_to_all_seconds(ic, bytes, ep, 8, 0.77);
        CHECK(rdma >= 0.7 * 43e9);  // the magnitude DeepEP measures, not a ring's eight cards per node (~300 GB/s)
        CHECK(rdma <= 58e9);
    }
    // Inside one node the NVLink share sets the time: 7/8 of the bytes at 0.77 of 450 GB/s, near DeepEP's 153 GB/s
    // of NVLink traffic per GPU (H800: 400 GB/s links, 160 GB/s usable) in order of magnitude.
    const double nvlink = bytes * 7 / 8 / all_to_all_seconds(ic, bytes, 8, 8, 0.77);
    CHECK(nvlink > 153e9);
    CHECK(all_to_all_seconds(ic, bytes, 1, 1, 0.77) == 0);
}

TEST_CASE("gpt-oss-120b on 64 B200 with EP 64 across eight nodes comes within 15 % of Megatron-Bridge 26.02") {
    // NVIDIA Megatron-Bridge docs/performance-summary-archive.md (commit 4ab94df), '26.02 NeMo Container', GPT OSS
    // 120B, DGX-B200: 64 GPUs, BF16, GBS 1280, MBS 4, sequence 4096, TP 1, PP 1, EP 64: 8047 tokens/s/GPU. Not a
    // row of the validation set; the all-to-all crosses InfiniBand for 56 of every 64 rows.
    const nlohmann::json args = {{"model", "gpt-oss-120b"},
                                 {"hardware", "b200"},
                                 {"gpus", 64},
                                 {"tp", 1},
                                 {"pp", 1},
                                 {"ep", 64},
                                 {"seq", 4096},
                                 {"micro_batch", 4},
                                 {"global_batch", 1280},
                                 {"dtype", "bf16"},
                                 {"stack", "megatron-te"},
                                 {"zero", 1},
                                 {"flash_attention", true}};
    const nlohmann::json r = api::invoke("step_time", args);
    const double per_gpu = r["tokens_per_second"].get<double>() / 64;
    CHECK(std::fabs(per_gpu / 8047 - 1) < 0.15);
}

TEST_CASE("combined 1F1B hides the all-to-all behind an adjacent micro-batch: Qwen3-235B-A22B on 256 H100") {
    // Megatron-Bridge 25.11 DGX-H100 row Qwen3_235B_a22B, 1,575 tokens/s/GPU; its v0.2.0 performance config sets
    // moe_a2a_overlap=True (overlap_moe_expert_parallel_comm). EP 32 spans four nodes: 3/4 of every all-to-all
    // crosses InfiniBand, which the overlap hides behind the other micro-batch's layer.
    nlohmann::json run = fit_run("nvidia-bridge-2511-qwen3-235b-a22b-h100-sxm-fp8-current-scaling-256gpu");
    REQUIRE(run["args"]["ep_overlap"] == true);
    const double published = run["published"]["value"].get<double>();
    const nlohmann::json with = api::invoke("step_time", run["args"]);
    CHECK(with["layout"]["ep_overlap"] == true);
    CHECK(std::fabs(predicted_per_gpu(run) / published - 1) < 0.2);
    run["args"]["ep_overlap"] = false;
    CHECK(predicted_per_gpu(run) / published - 1 < -0.3);  // every all-to-all exposed: far slower than measured
    // Only what outlasts the adjacent computation stays exposed.
    CHECK(moe_overlapped_all_to_all_seconds(3, 2) == 1);
    CHECK(moe_overlapped_all_to_all_seconds(1, 2) == 0);
    CHECK(moe_overlapped_all_to_all_seconds(1, 0) == 1);
}

TEST_CASE("at micro-batch 1 the per-expert host work outlasts the GPU: Qwen3 on B200; eight sequences hide it") {
    // Megatron-Bridge docs/performance-summary-archive.md (commit 4ab94df), 25.11, DGX-B200: Qwen3-30B-A3B FP8-MX on
    // 8 GPUs, MBS 1, EP 8: 9,299 tokens/s/GPU; Qwen3-235B-A22B FP8-MX on 64 GPUs, MBS 1, PP 8, EP 8: 3,269.
    // DGX-GB300: Qwen3-30B-A3B FP8-MX on 8 GPUs, MBS 4, EP 8: 28,934. 16 local experts each.
    for (const char* id :
         {"nvidia-bridge-2511-qwen3-30b-a3b-b200-mxfp8-8gpu", "nvidia-bridge-2511-qwen3-235b-a22b-b200-mxfp8-64gpu",
          "nvidia-bridge-2511-qwen3-30b-a3b-gb300-nvl72-mxfp8-8gpu"}) {
        INFO(id);
        const nlohmann::json run = fit_run(id);
        CHECK(std::fabs(predicted_per_gpu(run) / run["published"]["value"].get<double>() - 1) < 0.20);
    }
    // The B200 MBS-1 row waits on the host: its MoE host time exceeds the dispatch syncs alone ...
    const auto moe_host = [](const nlohmann::json& args) {
        return tally_test::breakdown_seconds(api::invoke("step_time", args), "moe_sync");
    };
    nlohmann::json b200 = fit_run("nvidia-bridge-2511-qwen3-30b-a3b-b200-mxfp8-8gpu")["args"];
    const double launch_bound = moe_host(b200);
    // ... and eight times the tokens per micro-batch (MBS 8, the GB300 BF16 config's) keep the GPU busier than it.
    b200["micro_batch"] = 8;
    const double micro_batches = b200["global_batch"].get<double>() / 8 / 8;
    CHECK(moe_host(b200) == Approx(1.25e-3 * 48 * micro_batches).epsilon(1e-9));  // the 48 layers' syncs alone
    CHECK(launch_bound > 2 * 8 * 1.25e-3 * 48 * micro_batches);  // MBS 1: 8x the syncs, and the launches more
    // Host seconds grow with the local experts; recomputation replays the forward's half.
    const Interconnect ic = find_hardware("b200").interconnect;
    const ModelConfig c = qwen3_30b_a3b();
    const MoeStepShape ep8 = moe_step_shape(c, ic, {4096, 1, 8, 1, 8, 0, 2, 0.77});
    const MoeStepShape ep4 = moe_step_shape(c, ic, {4096, 1, 4, 1, 8, 0, 2, 0.77});
    CHECK(moe_expert_host_seconds(ep4, false) == Approx(2 * moe_expert_host_seconds(ep8, false)));
    CHECK(moe_expert_host_seconds(ep8, true) == Approx(1.5 * moe_expert_host_seconds(ep8, false)));
    CHECK(moe_launch_bound_seconds(0.011, 0.004) == Approx(0.007));
    CHECK(moe_launch_bound_seconds(0.011, 0.02) == 0);
}

TEST_CASE("one all-to-all model: the MoE step's dispatch costs what collective prices for the same placement",
          "[moe]") {
    // step_moe.cpp's all_to_all_seconds is priced by collectives::cost; the sweep checks every shape the step can ask
    // for (inside one node, a node's share of the ranks, one rank per node), latency included.
    for (const char* id : {"a100-80gb", "h100-sxm", "b200", "mi300x"}) {
        const tally::Hardware hw = tally::find_hardware(id);
        for (const double fraction : {0.77, 0.8})
            for (const std::int64_t ep : {2, 8, 16, 64})
                for (const std::int64_t per_node : {1, 4, 8})
                    for (const double bytes : {1e3, 1e6, 2.3e8}) {
                        if (per_node > ep || ep % per_node != 0) continue;
                        const tally::collectives::Links links = tally::collectives::links_of(hw, fraction);
                        const tally::collectives::Placement place{per_node, ep / per_node};
                        const double collective =
                            tally::collectives::cost(tally::collectives::Kind::AllToAll,
                                                     tally::collectives::Algorithm::Ring, bytes, place, links)
                                .seconds;
                        CAPTURE(id, fraction, ep, per_node, bytes);
                        CHECK(tally::all_to_all_seconds(hw.interconnect, bytes, ep, per_node, fraction) ==
                              Approx(collective).epsilon(1e-12));
                        CHECK(collective > tally::collectives::kLaunchLatencySeconds);  // the latency is in both
                    }
    }
}
