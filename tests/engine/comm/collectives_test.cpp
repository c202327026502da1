// Tests of engine/src/comm/collectives.cpp and its API (api_collectives.cpp): the alpha-beta cost of collectives against
// nccl-tests' bus-bandwidth definition and published measurements, and the communication roofline.
#include <catch2/catch.hpp>

#include <string>

#include "api_helpers.h"
#include "tally/comm/collectives.h"
#include "tally/hardware/hardware.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;
namespace co = tally::collectives;

namespace {

json all_reduce(double bytes, int ranks_per_node, int nodes, const char* hardware = "h100-sxm") {
    return ok("collective", {{"collective", "all_reduce"},
                             {"message_bytes", bytes},
                             {"ranks_per_node", ranks_per_node},
                             {"nodes", nodes},
                             {"hardware", hardware}});
}

}  // namespace

TEST_CASE("bus bandwidth is algbw x 2(n-1)/n for all-reduce, x (n-1)/n for gathers and all-to-all (nccl-tests)",
          "[collectives]") {
    for (int n : {2, 3, 4, 8}) {
        const json r = all_reduce(1 << 30, n, 1);
        CHECK(r["bus_bytes_per_s"].get<double>() == Approx(r["algorithm_bytes_per_s"].get<double>() * 2 * (n - 1) / n));
        CHECK(r["bytes_sent_per_rank"].get<double>() == Approx(2.0 * (n - 1) / n * (1 << 30)));
        for (const char* kind : {"all_gather", "reduce_scatter", "all_to_all"}) {
            const json g =
                ok("collective",
                   {{"collective", kind}, {"message_bytes", 1 << 30}, {"ranks_per_node", n}, {"hardware", "h100-sxm"}});
            CHECK(g["bus_factor"].get<double>() == Approx(double(n - 1) / n));
        }
    }
    const json b = ok("collective", {{"collective", "broadcast"}, {"message_bytes", 1e9}, {"ranks_per_node", 8}});
    CHECK(b["bus_bytes_per_s"].get<double>() == b["algorithm_bytes_per_s"].get<double>());
}

TEST_CASE("ring all-reduce moves what a reduce-scatter and an all-gather move, in twice the steps", "[collectives]") {
    const auto one = [](const char* kind) {
        return ok("collective", {{"collective", kind}, {"message_bytes", 4e9}, {"ranks_per_node", 8}, {"nodes", 4}});
    };
    const json ar = one("all_reduce"), rs = one("reduce_scatter"), ag = one("all_gather");
    CHECK(ar["bandwidth_seconds"].get<double>() ==
          Approx(rs["bandwidth_seconds"].get<double>() + ag["bandwidth_seconds"].get<double>()));
    CHECK(ar["steps"] == rs["steps"].get<int>() + ag["steps"].get<int>());
    CHECK(ar["steps"] == 2 * (32 - 1));
}

TEST_CASE("8 x H100 over NVLink: ring all-reduce bus bandwidth near the 370 GB/s NCCL measures", "[collectives]") {
    // nccl-tests issue #212 (S. Jeaugey, NVIDIA): 450 GB/s line rate, "effective NVLink bandwidth of 370GB/s" as
    // busbw with NCCL_ALGO=RING, at large sizes.
    CHECK(all_reduce(8.0 * (1 << 30), 8, 1)["bus_bytes_per_s"].get<double>() == Approx(370e9).epsilon(0.05));
    // DGX A100 (300 GB/s a direction): nccl-tests reach about 230 GB/s all-reduce bus bandwidth.
    CHECK(all_reduce(8.0 * (1 << 30), 8, 1, "a100-80gb")["bus_bytes_per_s"].get<double>() ==
          Approx(230e9).epsilon(0.1));
}

TEST_CASE("small messages are latency-bound, large ones bandwidth-bound; trees cut the latency", "[collectives]") {
    const json small = all_reduce(8, 8, 1), large = all_reduce(1 << 30, 8, 1);
    CHECK(small["latency_seconds"].get<double>() > 100 * small["bandwidth_seconds"].get<double>());
    CHECK(large["bandwidth_seconds"].get<double>() > 50 * large["latency_seconds"].get<double>());
    // NCCL's model (tuning.cc at b6475625): a small all-reduce runs the LL ring, base 6.6 us + 2(n-1) NVLink steps
    // of 0.6 us; a large one Simple, base 8.4 us + 14 steps of 3.4 us.
    CHECK(small["latency_seconds"].get<double>() == Approx((6.6 + 14 * 0.6) * 1e-6));
    CHECK(small["protocol"] == "LL");
    CHECK(large["latency_seconds"].get<double>() == Approx((8.4 + 14 * 3.4) * 1e-6));
    CHECK(large["protocol"] == "Simple");
    const json args = {{"message_bytes", 1024}, {"ranks_per_node", 8}, {"nodes", 64}};
    json tree_args = args, ring_args = args;
    tree_args["algorithm"] = "tree";
    const json tree = ok("collective", tree_args), ring = ok("collective", ring_args);
    CHECK(tree["steps"] == 2 * 9);  // 512 ranks: log2 = 9 levels up and down
    CHECK(ring["steps"] == 2 * 511);
    CHECK(tree["seconds"].get<double>() < ring["seconds"].get<double>() / 10);
}

TEST_CASE("across nodes the ring runs at the node's network cards, one card per rank", "[collectives]") {
    const double eff = co::kDefaultLinkEfficiency;
    const json full = all_reduce(8.0 * (1 << 30), 8, 2);
    CHECK(full["bottleneck"] == "network");
    CHECK(full["bottleneck_bytes_per_s"].get<double>() == Approx(eff * 8 * 50e9));  // 8 x 400 Gb/s ConnectX-7
    const json single = all_reduce(8.0 * (1 << 30), 1, 16);
    CHECK(single["bottleneck_bytes_per_s"].get<double>() == Approx(eff * 50e9));
    CHECK(single["seconds"].get<double>() > 7 * full["seconds"].get<double>());
    // Inside one node nothing crosses the network.
    CHECK(all_reduce(1e9, 8, 1)["bottleneck"] == "nvlink");
}

TEST_CASE("all-to-all sends (n-1)/n of the buffer; across nodes the off-node share sets the time", "[collectives]") {
    const json in_node =
        ok("collective", {{"collective", "all_to_all"}, {"message_bytes", 1e9}, {"ranks_per_node", 8}});
    CHECK(in_node["bandwidth_seconds"].get<double>() == Approx(7.0 / 8 * 1e9 / (0.8 * 450e9)));
    const json two =
        ok("collective", {{"collective", "all_to_all"}, {"message_bytes", 1e9}, {"ranks_per_node", 8}, {"nodes", 2}});
    CHECK(two["bottleneck"] == "network");
    CHECK(two["bandwidth_seconds"].get<double>() == Approx(8.0 / 16 * 1e9 / (0.8 * 50e9)));
}

TEST_CASE("send_recv: one hop of the whole buffer at NCCL's one-step ring latency, LL up to 32 KiB, Simple above",
          "[collectives]") {
    const auto hop = [](double bytes, int ranks_per_node, int nodes) {
        return ok("collective", {{"collective", "send_recv"},
                                 {"message_bytes", bytes},
                                 {"ranks_per_node", ranks_per_node},
                                 {"nodes", nodes}});
    };
    // NVIDIA/nccl b6475625 src/graph/tuning.cc, ring: Simple base 8.4 us + an NVLink step 3.4 us or a network step
    // 14 us; LL base 6.6 us + 0.6 us (NVLink) or 2.7 us (network).
    const json big = hop(1e9, 8, 1);
    CHECK(big["protocol"] == "Simple");
    CHECK(big["steps"] == 1);
    CHECK(big["bus_factor"] == 1);
    CHECK(big["latency_seconds"].get<double>() == Approx(11.8e-6));
    CHECK(big["bandwidth_seconds"].get<double>() == Approx(1e9 / (0.8 * 450e9)));  // the whole buffer over NVLink
    const json off = hop(1e9, 8, 2);  // the hop that leaves the node goes through the sender's own card
    CHECK(off["bottleneck"] == "network");
    CHECK(off["latency_seconds"].get<double>() == Approx(22.4e-6));
    CHECK(off["bandwidth_seconds"].get<double>() == Approx(1e9 / (0.8 * 50e9)));
    CHECK(hop(1e9, 1, 64)["seconds"].get<double>() == Approx(off["seconds"].get<double>()));  // ranks don't matter
    // Small buffers take LL (src/enqueue.cc addP2pToPlan: P2P_LL_THRESHOLD 16384 bytes a channel, 2 channels).
    const json small = hop(32768, 8, 1);
    CHECK(small["protocol"] == "LL");
    CHECK(small["latency_seconds"].get<double>() == Approx(7.2e-6));
    CHECK(hop(32769, 8, 1)["protocol"] == "Simple");
    CHECK(hop(1e3, 2, 1)["seconds"].get<double>() < big["latency_seconds"].get<double>());
    CHECK(error("collective", {{"collective", "send_recv"},
                               {"algorithm", "tree"},
                               {"message_bytes", 1e6},
                               {"ranks_per_node", 8}})["field"] == "algorithm");
}

TEST_CASE("collective refuses bad input naming the field and the range", "[collectives]") {
    const json base = {{"collective", "all_reduce"}, {"message_bytes", 1e9}, {"ranks_per_node", 8}, {"nodes", 1}};
    const auto refused = [&](const char* field, const json& value) {
        json args = base;
        args[field] = value;
        return error("collective", args);
    };
    json e = refused("ranks_per_node", 0);
    CHECK(e["field"] == "ranks_per_node");
    CHECK(e["message"].get<std::string>().find("from 1 to 8") != std::string::npos);
    CHECK(refused("ranks_per_node", 9)["field"] == "ranks_per_node");
    CHECK(refused("nodes", 0)["field"] == "nodes");
    e = refused("message_bytes", 0);
    CHECK(e["field"] == "message_bytes");
    CHECK(e["message"].get<std::string>().find("from 1 to 1e15") != std::string::npos);
    CHECK(refused("collective", "allreduce")["field"] == "collective");
    CHECK(refused("efficiency", 1.5)["field"] == "efficiency");
    json tree = base;
    tree["collective"] = "all_gather";
    tree["algorithm"] = "tree";
    CHECK(error("collective", tree)["field"] == "algorithm");
    json lone = base;
    lone["ranks_per_node"] = 1;
    CHECK(error("collective", lone)["field"] == "ranks_per_node");
}

TEST_CASE("comm roofline: DP moves 2(k-1)/k of a layer's bf16 gradients; TP's intensity ignores the batch",
          "[collectives]") {
    const json args = {{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"seq", 4096}, {"degree", 8}};
    const json r = ok("comm_roofline", args);
    // One Llama-2-7B layer: 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360 parameters.
    CHECK(r["layer_params"] == 202383360.0);
    const auto row = [](const json& result, const char* id) {
        for (const json& item : result["strategies"])
            if (item["id"] == id) return item;
        FAIL(id);
        return json();
    };
    CHECK(row(r, "dp")["bytes_per_gpu"].get<double>() == Approx(2 * 7.0 / 8 * 202383360.0 * 2));
    CHECK(row(r, "fsdp")["bytes_per_gpu"].get<double>() == Approx(3 * 7.0 / 8 * 202383360.0 * 2));
    CHECK(row(r, "tp")["bytes_per_gpu"].get<double>() == Approx(4 * 2 * 7.0 / 8 * 4096 * 4096 * 2));
    CHECK(row(r, "ep")["applies"] == false);  // a dense model has no experts
    CHECK(row(r, "dp")["communication_bound"] == false);
    json doubled_args = args;
    doubled_args["micro_batch"] = 2;
    const json doubled = ok("comm_roofline", doubled_args);
    CHECK(row(doubled, "dp")["flops_per_byte"].get<double>() ==
          Approx(2 * row(r, "dp")["flops_per_byte"].get<double>()));
    CHECK(row(doubled, "tp")["flops_per_byte"].get<double>() == Approx(row(r, "tp")["flops_per_byte"].get<double>()));
    // TP beyond the node falls to the network link and becomes communication-bound.
    json wide = args;
    wide["degree"] = 16;
    CHECK(row(ok("comm_roofline", wide), "tp")["communication_bound"] == true);
    // A MoE model's expert parallelism applies.
    CHECK(row(ok("comm_roofline", {{"model", "mixtral-8x7b"}, {"degree", 8}}), "ep")["applies"] == true);
    CHECK(error("comm_roofline", {{"model", "llama-2-7b"}, {"degree", 1}})["field"] == "degree");
}

TEST_CASE(
    "one link rule: comm_roofline's ring rows take the bandwidth collective's ring all-reduce is bound by, "
    "its stage boundary and K, V ring send_recv's",
    "[collectives]") {
    for (const char* hardware : {"h100-sxm", "a100-80gb", "b200", "mi300x"})
        for (const int degree : {2, 8, 16, 64}) {
            INFO(hardware << " over " << degree << " GPUs");
            const json roof =
                ok("comm_roofline", {{"model", "llama-2-7b"}, {"hardware", hardware}, {"degree", degree}});
            const int per_node = 8;  // gpus_per_node of each of these presets (content/presets/hardware)
            const int ranks_per_node = degree < per_node ? degree : per_node;
            const json ring = ok("collective", {{"collective", "all_reduce"},
                                                {"message_bytes", 1e9},
                                                {"ranks_per_node", ranks_per_node},
                                                {"nodes", degree / ranks_per_node},
                                                {"hardware", hardware}});
            const json hop = ok("collective", {{"collective", "send_recv"},
                                               {"message_bytes", 1e9},
                                               {"ranks_per_node", ranks_per_node},
                                               {"nodes", degree / ranks_per_node},
                                               {"hardware", hardware}});
            for (const json& row : roof["strategies"]) {
                INFO(row["id"]);
                if (row["id"] == "dp" || row["id"] == "fsdp" || row["id"] == "tp")
                    CHECK(row["link_bytes_per_s"].get<double>() ==
                          Approx(ring["bottleneck_bytes_per_s"].get<double>()));
                if ((row["id"] == "pp" && row["applies"] == true) || row["id"] == "cp")
                    CHECK(row["link_bytes_per_s"].get<double>() == Approx(hop["bottleneck_bytes_per_s"].get<double>()));
            }
            // EP (a MoE model): the bandwidth collective's all-to-all is bound by over the same ranks.
            const json moe =
                ok("comm_roofline", {{"model", "mixtral-8x7b"}, {"hardware", hardware}, {"degree", degree}});
            const json a2a = ok("collective", {{"collective", "all_to_all"},
                                               {"message_bytes", 1e9},
                                               {"ranks_per_node", ranks_per_node},
                                               {"nodes", degree / ranks_per_node},
                                               {"hardware", hardware}});
            for (const json& row : moe["strategies"])
                if (row["id"] == "ep")
                    CHECK(row["link_bytes_per_s"].get<double>() == Approx(a2a["bottleneck_bytes_per_s"].get<double>()));
            // Across nodes a send leaves through its own card, a ring through the node's: 8 times faster here.
            if (degree > per_node)
                CHECK(ring["bottleneck_bytes_per_s"].get<double>() ==
                      Approx(per_node * hop["bottleneck_bytes_per_s"].get<double>()));
        }
}
