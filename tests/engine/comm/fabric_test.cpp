// A measured cluster fabric (fabric.h, content/presets/fabrics): the bus bandwidth the Ultra-Scale Playbook measured
// on Hugging Face's H100 cluster by node count, and step time pricing collectives across nodes at it.
#include <catch2/catch.hpp>

#include <cmath>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/comm/fabric.h"
#include "tally/hardware/hardware.h"
#include "tally/step/step.h"

using namespace tally;
using tally_test::error_field;
using tally_test::modern_run;

namespace {

const Fabric& playbook() {
    const Fabric* f = find_fabric("hf-ultrascale-h100");
    REQUIRE(f != nullptr);
    return *f;
}

double step_seconds(nlohmann::json args, const char* fabric) {
    args["fabric"] = fabric;
    return api::invoke("step_time", args)["step_seconds"].get<double>();
}

}  // namespace

TEST_CASE("the Playbook's cluster: NCCL bus bandwidth 436.0 GB/s on 1 node down to 32.9 GB/s on 64 (256 MB)") {
    // The Ultra-Scale Playbook (Hugging Face, 2025), Pipeline Parallelism, figure 'Communication Bandwidth by Number
    // of Nodes (size=256MB)', 8 H100 per node: median labels at 1, 2, 4, 8, 16, 32, 64 nodes.
    const Fabric& f = playbook();
    CHECK(f.gpus_per_node == 8);
    CHECK(f.message_bytes == 256.0 * 1024 * 1024);
    const double nodes[] = {1, 2, 4, 8, 16, 32, 64};
    const double gb_s[] = {436.0, 361.7, 160.1, 99.6, 84.7, 64.9, 32.9};
    for (int i = 0; i < 7; ++i) CHECK(fabric_bus_bytes_per_s(f, nodes[i]) == Approx(gb_s[i] * 1e9));
    // Between measured counts: linear in log(nodes), so 2^1.5 nodes sits half-way between 2 and 4 nodes.
    CHECK(fabric_bus_bytes_per_s(f, std::pow(2.0, 1.5)) == Approx((361.7 + 160.1) / 2 * 1e9));
    CHECK(fabric_bus_bytes_per_s(f, 3) < 361.7e9);
    CHECK(fabric_bus_bytes_per_s(f, 3) > 160.1e9);
    // Beyond the benchmark the last measurement holds (no extrapolation).
    CHECK(fabric_bus_bytes_per_s(f, 128) == Approx(32.9e9));
    CHECK(error_field([&] { fabric_bus_bytes_per_s(f, 0.5); }) == "nodes");
    CHECK(find_fabric("nominal") == nullptr);
    CHECK(find_fabric("") == nullptr);
    CHECK(error_field([] { find_fabric("infiniband-dream"); }) == "fabric");
    CHECK(fabric_ids().front() == "nominal");
    // step_time's declared choices (api_args.h, a compile-time list) are the fabric presets the engine reads.
    std::vector<std::string> declared;
    for (const nlohmann::json& m : api::invoke("methods", {{"detail", true}}))
        if (m["name"] == "step_time")
            for (const nlohmann::json& a : m["args"])
                if (a["name"] == "fabric") declared = a["values"].get<std::vector<std::string>>();
    CHECK(declared == fabric_ids());
}

TEST_CASE("a ring across nodes runs no faster than the measured bus bandwidth at its span; one node keeps NVLink") {
    const Hardware hw = find_hardware("h100-sxm");
    Interconnect ic;
    fabric_interconnect(hw, "hf-ultrascale-h100", ic);
    REQUIRE(ic.fabric == &playbook());
    const double fraction = 0.77;  // step.cpp's kCollectiveBandwidthFraction, divided back out by the fabric
    // All 8 GPUs of each of 64 nodes in one ring: the benchmark itself.
    CHECK(fraction * group_link_bytes_per_s(ic, 8, 64) == Approx(32.9e9));
    // Two members per node (tp 4) over 64 nodes: the same measured ceiling, below their 2 cards' nominal share.
    CHECK(fraction * group_link_bytes_per_s(ic, 2, 64) == Approx(32.9e9));
    CHECK(group_link_bytes_per_s(ic, 2, 64) < group_link_bytes_per_s(hw.interconnect, 2, 64));
    // Over 2 nodes the measurement (361.7 GB/s) is above the node's 8 cards (0.77 x 400 GB/s): the cards decide.
    CHECK(group_link_bytes_per_s(ic, 8, 2) == group_link_bytes_per_s(hw.interconnect, 8, 2));
    CHECK(fraction * group_link_bytes_per_s(ic, 8, 8) == Approx(99.6e9));
    // Inside one node the fabric changes nothing.
    CHECK(group_link_bytes_per_s(ic, 8, 1) == group_link_bytes_per_s(hw.interconnect, 8, 1));
    CHECK(group_link_bytes_per_s(ic, 8, 64) < 0.2 * group_link_bytes_per_s(hw.interconnect, 8, 64));
}

TEST_CASE("nanotron on the Playbook's cluster: slower than nominal across 64 nodes, the same on one node") {
    const nlohmann::json wide = modern_run("nanotron-1p34b-512gpu");
    const nlohmann::json one_node = modern_run("nanotron-1p34b-8gpu");
    REQUIRE(wide["args"]["gpus"] == 512);
    REQUIRE(one_node["args"]["gpus"] == 8);
    const double wide_nominal = step_seconds(wide["args"], "nominal");
    const double wide_measured = step_seconds(wide["args"], "hf-ultrascale-h100");
    CHECK(wide_measured > 1.2 * wide_nominal);  // the data-parallel all-reduce over 64 nodes at 32.9 GB/s
    CHECK(step_seconds(one_node["args"], "hf-ultrascale-h100") == step_seconds(one_node["args"], "nominal"));
    // The layout echoes the fabric; an unknown one is refused naming the field.
    nlohmann::json args = wide["args"];
    args["fabric"] = "hf-ultrascale-h100";
    CHECK(api::invoke("step_time", args)["layout"]["fabric"] == "hf-ultrascale-h100");
    args["fabric"] = "infiniband-dream";
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "fabric");
}

TEST_CASE(
    "the planner prices layouts on the named fabric: 512 H100 of the Playbook's cluster run slower than nominal") {
    nlohmann::json args{{"model", "llama-3-8b"}, {"hardware", "h100-sxm"}, {"gpus", 512},
                        {"seq", 4096},           {"global_batch", 256},    {"top", 1}};
    const nlohmann::json nominal = api::invoke("plan", args)["best"][0];
    args["fabric"] = "hf-ultrascale-h100";
    const nlohmann::json measured = api::invoke("plan", args)["best"][0];
    CHECK(measured["layout"]["fabric"] == "hf-ultrascale-h100");
    CHECK_FALSE(nominal["layout"].contains("fabric"));
    CHECK(measured["tokens_per_second"].get<double>() < nominal["tokens_per_second"].get<double>());
}
