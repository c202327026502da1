// Tests of engine/src/comm/overlap.cpp and its API (api_overlap.cpp): the step timelines of DDP buckets, FSDP prefetch
// and a tensor-parallel collective matmul against their closed forms, with collective times from the API's
// own `collective` method (the alpha-beta model the timeline must reuse).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "api_helpers.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

namespace {

double collective_seconds(const char* kind, double bytes, int ranks_per_node = 8, int nodes = 1) {
    return ok("collective", {{"collective", kind},
                             {"message_bytes", bytes},
                             {"ranks_per_node", ranks_per_node},
                             {"nodes", nodes},
                             {"hardware", "h100-sxm"}})["seconds"]
        .get<double>();
}

// The overlap method on an H100 node: `layers` layers of `forward` and `backward` seconds, each `layer_bytes` to
// communicate, and the scheme's own arguments in `extra`.
json timeline(const char* scheme, int layers, double forward, double backward, double layer_bytes,
              json extra = json::object()) {
    extra.update({{"scheme", scheme},
                  {"layers", layers},
                  {"forward_seconds", forward},
                  {"backward_seconds", backward},
                  {"layer_bytes", layer_bytes},
                  {"hardware", "h100-sxm"}});
    return ok("overlap", extra);
}

double num(const json& r, const char* field) { return r[field].get<double>(); }

}  // namespace

TEST_CASE("DDP without overlap: every bucket's all-reduce waits for the last backward and is exposed", "[overlap]") {
    const int L = 6;
    const double F = 2e-3, B = 4e-3, layer = 40e6, bucket = 100e6;
    const json r = timeline("ddp", L, F, B, layer, {{"bucket_bytes", bucket}, {"overlap", false}});
    // 240 MB in 100 MB buckets: two full buckets and a 40 MB remainder.
    CHECK(r["collectives"] == 3);
    const double comm = 2 * collective_seconds("all_reduce", bucket) + collective_seconds("all_reduce", 40e6);
    CHECK(num(r, "comm_seconds") == Approx(comm));
    CHECK(num(r, "step_seconds") == Approx(L * (F + B) + comm));
    CHECK(num(r, "exposed_comm_seconds") == Approx(comm));
    CHECK(num(r, "hidden_comm_seconds") == Approx(0).margin(1e-12));
}

TEST_CASE("DDP bucketed during backward: only the bucket holding the first layer's gradients stays exposed",
          "[overlap]") {
    // One bucket per layer, each all-reduce shorter than a layer's backward: all but the last hide.
    const int L = 8;
    const double F = 2e-3, B = 4e-3, layer = 200e6;
    const double ar = collective_seconds("all_reduce", layer);
    REQUIRE(ar < B);
    const json r = timeline("ddp", L, F, B, layer, {{"bucket_bytes", layer}});
    CHECK(r["collectives"] == L);
    CHECK(num(r, "step_seconds") == Approx(L * (F + B) + ar));
    CHECK(num(r, "exposed_comm_seconds") == Approx(ar));
    CHECK(num(r, "hidden_comm_seconds") == Approx((L - 1) * ar));
    // Smaller buckets pay the latency more often but leave a shorter tail: 25 MiB (PyTorch's default) exposes
    // less than one bucket per 200 MB layer.
    const json small = timeline("ddp", L, F, B, layer);
    CHECK(num(small, "bucket_bytes") == 25.0 * 1024 * 1024);
    CHECK(small["collectives"] == static_cast<int>(std::ceil(L * layer / (25.0 * 1024 * 1024))));
    CHECK(num(small, "exposed_comm_seconds") < num(r, "exposed_comm_seconds"));
}

TEST_CASE("DDP whose all-reduce outruns the backward is communication-bound: the lane, not the compute, sets the step",
          "[overlap]") {
    // One rank per node over 16 nodes: 40 GB/s per rank, so 400 MB of gradients per layer take ~19 ms a bucket.
    const int L = 4;
    const double F = 1e-3, B = 2e-3, layer = 400e6;
    const json r = timeline("ddp", L, F, B, layer, {{"bucket_bytes", layer}, {"ranks_per_node", 1}, {"nodes", 16}});
    const double ar = collective_seconds("all_reduce", layer, 1, 16);
    REQUIRE(ar > B);
    // The first bucket starts after the last layer's backward; then the lane runs back to back.
    CHECK(num(r, "step_seconds") == Approx(L * F + B + L * ar));
}

TEST_CASE("FSDP without prefetch serialises every gather and reduce-scatter with compute", "[overlap]") {
    const int L = 5;
    const double F = 3e-3, B = 6e-3, layer = 300e6;
    const double g = collective_seconds("all_gather", layer), s = collective_seconds("reduce_scatter", layer);
    const json r = timeline("fsdp", L, F, B, layer, {{"overlap", false}});
    CHECK(r["collectives"] == 3 * L);  // a gather forward, a gather backward, a reduce-scatter
    CHECK(num(r, "step_seconds") == Approx(L * (F + B) + L * (2 * g + s)));
    CHECK(num(r, "exposed_comm_seconds") == Approx(num(r, "comm_seconds")));
}

TEST_CASE("FSDP with prefetch exposes only the first gather and the last reduce-scatter when compute is longer",
          "[overlap]") {
    const int L = 6;
    const double F = 3e-3, B = 6e-3, layer = 300e6;
    const double g = collective_seconds("all_gather", layer), s = collective_seconds("reduce_scatter", layer);
    REQUIRE(g + s < F);
    const json r = timeline("fsdp", L, F, B, layer);
    CHECK(num(r, "step_seconds") == Approx(L * (F + B) + g + s));
    CHECK(num(r, "exposed_comm_seconds") == Approx(g + s));
}

TEST_CASE("TP collective matmul: chunking exposes one chunk's transfer per pass instead of the whole collective",
          "[overlap]") {
    const int L = 4, chunks = 4;
    const double F = 2e-3, B = 4e-3, bytes = 256e6;
    const json plain = timeline("tp", L, F, B, bytes, {{"overlap", false}});
    const double whole = collective_seconds("all_gather", bytes);
    CHECK(num(plain, "exposed_comm_seconds") == Approx(2 * L * whole));
    const json chunked = timeline("tp", L, F, B, bytes, {{"chunks", chunks}});
    const double piece = collective_seconds("all_gather", bytes / chunks);
    REQUIRE(piece < F / chunks);
    CHECK(chunked["collectives"] == 2 * L * chunks);
    CHECK(num(chunked, "exposed_comm_seconds") == Approx(2 * L * piece));
    // Latency is paid per piece: the chunks together move the bytes more slowly than one collective.
    CHECK(chunks * piece > whole);
}

TEST_CASE("overlap refuses bad input naming the field", "[overlap]") {
    CHECK(error("overlap", {{"scheme", "zero"}})["field"] == "scheme");
    CHECK(error("overlap", {{"layers", 0}})["field"] == "layers");
    CHECK(error("overlap", {{"forward_seconds", -1}})["field"] == "forward_seconds");
    CHECK(error("overlap", {{"backward_seconds", 0}})["field"] == "backward_seconds");
    CHECK(error("overlap", {{"layer_bytes", 0.5}})["field"] == "layer_bytes");
    CHECK(error("overlap", {{"bucket_bytes", 1e16}})["field"] == "bucket_bytes");
    CHECK(error("overlap", {{"scheme", "tp"}, {"chunks", 65}})["field"] == "chunks");
    CHECK(error("overlap", {{"ranks_per_node", 1}, {"nodes", 1}})["field"] == "ranks_per_node");
    CHECK(error("overlap", {{"ranks_per_node", 9}})["field"] == "ranks_per_node");
}
