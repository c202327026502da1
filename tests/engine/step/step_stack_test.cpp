// Tests of the step-time mechanisms of issue 24: collectives from topology (the node's network cards shared by a
// group's members), matmul efficiency by GPU generation, attention efficiency by kernel, the software-stack
// profiles (tensor-parallel overlap), each against a published figure from the fit half of
// content/validation/runs-modern.json or a published collective benchmark.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/hardware/hardware.h"
#include "tally/step/step.h"

using namespace tally;
using tally_test::error_field;
using tally_test::fit_run;

namespace {

double per_gpu(const nlohmann::json& args) {
    const nlohmann::json r = api::invoke("step_time", args);
    return r["tokens_per_second"].get<double>() / args["gpus"].get<double>();
}

double published(const std::string& id) { return fit_run(id)["published"]["value"].get<double>(); }

double seconds_of(const nlohmann::json& args, const char* id) {
    const nlohmann::json r = api::invoke("step_time", args);
    for (const auto& part : r["breakdown"])
        if (part["id"] == id) return part["seconds"];
    FAIL("no component " << id);
    return 0;
}

}  // namespace

TEST_CASE("a ring across nodes runs at the node's cards shared by its members: nccl-tests, 8 A100 + 4 HDR per node") {
    // NVIDIA/nccl-tests issue #119: 3 nodes of 8 A100 SXM4 with 4 HDR 200 Gb/s cards each: the reporter expects
    // 100 GB/s (4 x 200 Gb/s) of all_reduce bus bandwidth and measures 84.8 GB/s on average, 96 GB/s at peak.
    Interconnect ic;
    ic.present = true;
    ic.gpus_per_node = 8;
    ic.intra_node_bytes_per_s = 300e9;      // NVLink 3, each way
    ic.network_bytes_per_s = 4 * 25e9 / 8;  // the per-GPU share of 4 HDR cards
    const double node_cards = group_link_bytes_per_s(ic, 8, 3);
    CHECK(node_cards == Approx(100e9));
    const double predicted_busbw = 0.77 * node_cards;  // step.cpp's kCollectiveBandwidthFraction
    CHECK(std::fabs(predicted_busbw - 84.8e9) / 84.8e9 < 0.15);
    // One card per GPU (the model before issue 24) is nearly 10x too slow for the same group.
    CHECK(0.77 * ic.network_bytes_per_s < 0.15 * 84.8e9);
    // Two members per node (tp 4): four such groups share the node's cards, a quarter each.
    CHECK(group_link_bytes_per_s(ic, 2, 12) == Approx(node_cards / 4));
    // Never faster than NVLink, and inside one node NVLink alone.
    ic.network_bytes_per_s = 100e9;
    CHECK(group_link_bytes_per_s(ic, 8, 2) == ic.intra_node_bytes_per_s);
    CHECK(group_link_bytes_per_s(ic, 8, 1) == ic.intra_node_bytes_per_s);
}

TEST_CASE("FSDP over whole nodes keeps its per-GPU throughput: MosaicML MPT-13B on 8 and 64 H100 (4,792 and 4,800)") {
    // The example: a flat ~4,800 tokens/s per GPU from 8 to 64 H100; one card per GPU made the 64-GPU run
    // 57 % slower than the 8-GPU one.
    const std::string eight = "mosaicml-mpt-13b-h100-sxm-8gpu-seq2048",
                      many = "mosaicml-mpt-13b-h100-sxm-64gpu-seq2048";
    const double published_ratio = published(many) / published(eight);
    const double predicted_ratio = per_gpu(fit_run(many)["args"]) / per_gpu(fit_run(eight)["args"]);
    INFO("published " << published_ratio << ", predicted " << predicted_ratio);
    CHECK(std::fabs(predicted_ratio - published_ratio) / published_ratio < 0.10);
}

TEST_CASE(
    "H100 over A100 in one code on the same layout: MosaicML MPT on 8 GPUs, 2.1-2.3x, below the 3.2x peak ratio") {
    for (const char* size : {"7b", "13b", "30b"}) {
        const std::string h100 = std::string("mosaicml-mpt-") + size + "-h100-sxm-8gpu-seq2048";
        const std::string a100 = std::string("mosaicml-mpt-") + size + "-a100-80gb-8gpu-seq2048";
        nlohmann::json on_a100 = fit_run(h100)["args"];
        on_a100["hardware"] = "a100-80gb";
        const double predicted = per_gpu(fit_run(h100)["args"]) / per_gpu(on_a100);
        const double measured = published(h100) / published(a100);
        INFO(size << ": measured " << measured << ", predicted " << predicted);
        CHECK(predicted < 2.7);  // one fraction of peak for both generations predicted 3.0-3.1x (issue 24)
        CHECK(std::fabs(predicted - measured) / measured < 0.25);
    }
    CHECK(matmul_peak_fraction("hopper") < matmul_peak_fraction("ampere"));
    CHECK(matmul_peak_fraction("blackwell") < matmul_peak_fraction("ampere"));
}

TEST_CASE("long sequences on H100 with FlashAttention-2: MPT-7B at 65,536 over 2,048 tokens, 0.18x measured") {
    // FlashAttention-2 reaches 35 % of H100's peak, FlashAttention-3 / cuDNN much more (Shah et al. 2024).
    const std::string long_run = "mosaicml-mpt-7b-h100-sxm-8gpu-seq65536",
                      short_run = "mosaicml-mpt-7b-h100-sxm-8gpu-seq2048";
    nlohmann::json long_args = fit_run(long_run)["args"], short_args = fit_run(short_run)["args"];
    REQUIRE(long_args["stack"] == "pytorch-fsdp");
    const double measured = published(long_run) / published(short_run);
    const double fa2 = per_gpu(long_args) / per_gpu(short_args);
    long_args["stack"] = short_args["stack"] = "megatron-te";
    const double fused = per_gpu(long_args) / per_gpu(short_args);
    INFO("measured " << measured << ", FlashAttention-2 " << fa2 << ", fused " << fused);
    CHECK(std::fabs(fa2 - measured) / measured < 0.35);  // one 50 % attention fraction predicted 0.28 (+53 %)
    CHECK(fused > fa2);
    CHECK(attention_efficiency(AttentionKernel::FlashAttention2, "hopper") <
          attention_efficiency(AttentionKernel::FlashAttention2, "ampere"));
    CHECK(
        attention_efficiency(AttentionKernel::FusedHopper, "ampere") ==
        attention_efficiency(AttentionKernel::FlashAttention2, "ampere"));  // FA3 and cuDNN's sm90 kernels need Hopper
}

TEST_CASE(
    "Megatron-Core with TE and --tp-comm-overlap hides sequence-parallel communication: GPT 32B on 384 H100 at "
    "46 % MFU") {
    nlohmann::json args = fit_run("megatron-core-r0.8-gpt-32b-384gpu")["args"];
    REQUIRE(args["stack"] == "megatron-te");
    REQUIRE(args["tp_comm_overlap"] == true);  // the source states --tp-comm-overlap
    const nlohmann::json r = api::invoke("step_time", args);
    const double mfu = r["mfu"].get<double>();
    INFO("predicted MFU " << mfu);
    // -9.2 % before the gradient reduction's last bucket and its contention were charged (step_dp.h,
    // overlap_contention.h), -10.9 % with them, -19.7 % once each of the 84 distributed-optimizer buckets pays
    // NCCL's ring latency over 48 nodes (nccl_cost.h).
    CHECK(std::fabs(mfu - 0.46) / 0.46 < 0.22);
    CHECK(r["layout"]["stack"] == "megatron-te");
    CHECK(seconds_of(args, "tp_comm_hidden") > 0);
    // Megatron-Core's default (ModelParallelConfig.tp_comm_overlap False): without the switch nothing hides.
    nlohmann::json off = args;
    off.erase("tp_comm_overlap");
    CHECK(seconds_of(off, "tp_comm_hidden") == 0);
    CHECK(seconds_of(off, "tp_comm") > 0);
    nlohmann::json generic = off;
    generic["stack"] = "generic";
    CHECK(seconds_of(generic, "tp_comm_hidden") == 0);
    CHECK(seconds_of(generic, "tp_comm") > seconds_of(args, "tp_comm"));
    generic.erase("stack");
    CHECK(api::invoke("step_time", generic)["layout"]["stack"] == "generic");  // the default, stated in docs/API.md
}

TEST_CASE("stack and architecture errors name their field") {
    nlohmann::json args = fit_run("megatron-core-r0.8-gpt-32b-384gpu")["args"];
    args["stack"] = "megatron";
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "stack");
    args["stack"] = "generic";
    nlohmann::json hw = *find_preset("hardware", "h100-sxm");
    hw["architecture"] = "volta";
    args["hardware"] = hw;
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "architecture");
    hw.erase("architecture");  // unknown generation: the Ampere-calibrated fractions
    args["hardware"] = hw;
    CHECK(api::invoke("step_time", args)["mfu"].get<double>() > 0);
}
