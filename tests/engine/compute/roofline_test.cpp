// Tests of engine/src/compute/roofline.cpp: the traffic model of the GEMM ladder and the named operations.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tally/api.h"
#include "tally/gemm.h"
#include "tally/compute/roofline.h"

using nlohmann::json;
namespace rl = tally::roofline;

TEST_CASE("a bf16 square matmul of size n has intensity n/3 FLOP/byte (2n^3 over 3 n^2 x 2 bytes)") {
    for (double n : {256.0, 4096.0}) {
        const auto t = rl::matmul_min_traffic(n, n, n, 2);
        CHECK(t.flops == 2 * n * n * n);
        CHECK(t.bytes == 6 * n * n);
        CHECK(t.intensity == Approx(n / 3));
    }
}

TEST_CASE("naive and ikj re-read B per row of C once B exceeds the cache: intensity -> 0.5 FLOP/byte") {
    const auto& naive = *tally::gemm::find_kernel("naive");
    // n = 1024: B is 4 MiB > 1 MiB cache -> bytes = 4(n^2 + n^3 + n^2)
    const auto big = rl::kernel_traffic(naive.traffic, naive.tiling, 1024, 1024, 1024, 1 << 20);
    CHECK(big.bytes == 4.0 * (1024.0 * 1024 + 1024.0 * 1024 * 1024 + 1024.0 * 1024));
    CHECK(big.intensity == Approx(0.5).epsilon(0.01));
    // n = 256: B is 256 KiB, fits -> compulsory traffic 3 n^2 floats, intensity n/6
    const auto small = rl::kernel_traffic(naive.traffic, naive.tiling, 256, 256, 256, 1 << 20);
    CHECK(small.intensity == Approx(256.0 / 6));
}

TEST_CASE("blocked kernels move A once per nc panel, B once and C once per kc pass") {
    const auto& simd = *tally::gemm::find_kernel("simd");
    const auto t = simd.tiling;
    REQUIRE(t.kc > 0);
    const double n = 2048;
    const auto traffic = rl::kernel_traffic(simd.traffic, simd.tiling, 2048, 2048, 2048, 1 << 20);
    const double a_reads = std::ceil(n / std::min(n, double(t.nc)));
    const double c_passes = std::ceil(n / t.kc);
    CHECK(traffic.bytes == 4 * n * n * a_reads + 4 * n * n + 8 * n * n * c_passes);
    // Blocking raises the intensity far above the unblocked kernels at the same size.
    const auto ikj = rl::kernel_traffic(tally::gemm::find_kernel("ikj")->traffic,
                                        tally::gemm::find_kernel("ikj")->tiling, 2048, 2048, 2048, 1 << 20);
    CHECK(traffic.intensity > 50 * ikj.intensity);
}

TEST_CASE("named ops: matvec ~1 FLOP/byte in bf16, add 1/6, fused attention ~2x unfused at s = 2048") {
    rl::OpsConfig config;  // bf16, s = 2048, d = 4096, 32 heads
    std::map<std::string, rl::Op> ops;
    for (const auto& op : rl::named_ops(config)) ops[op.id] = op;
    CHECK(ops.at("matvec").intensity == Approx(1.0).epsilon(0.001));
    CHECK(ops.at("add").intensity == Approx(1.0 / 6));
    CHECK(ops.at("gelu").intensity == Approx(9.0 / 4));
    CHECK(ops.at("matmul-4096").intensity == Approx(4096.0 / 3));
    // unfused: 2 (4 s d + 4 h s^2) bytes; fused: 2 (2 s d + 2 s d * s/128) bytes (K, V re-read per query block)
    const double s = 2048, d = 4096, h = 32;
    CHECK(ops.at("attention-unfused").bytes == 2 * (4 * s * d + 4 * h * s * s));
    CHECK(ops.at("attention-fused").bytes == 2 * (2 * s * d + 2 * s * d * (s / 128)));
    CHECK(ops.at("attention-fused").intensity > 1.9 * ops.at("attention-unfused").intensity);
    CHECK(ops.at("attention-fused").flops == ops.at("attention-unfused").flops);
    // unfused attention FLOPs: 4 s^2 d + 5 s^2 h
    CHECK(ops.at("attention-unfused").flops == 4.0 * 2048 * 2048 * 4096 + 5.0 * 2048 * 2048 * 32);
}

TEST_CASE("attainable throughput is min(peak, I x bandwidth)") {
    CHECK(rl::attainable(1.0, 1e15, 3.35e12) == 3.35e12);
    CHECK(rl::attainable(1e4, 1e15, 3.35e12) == 1e15);
}

TEST_CASE("roofline API: bad dtype, heads not dividing d_model and unknown hardware name the field") {
    CHECK(json::parse(tally::api::call("roofline", R"({"dtype":"int4"})"))["error"]["field"] == "dtype");
    CHECK(json::parse(tally::api::call("roofline", R"({"d_model":100,"heads":3})"))["error"]["field"] == "heads");
    CHECK(json::parse(tally::api::call("roofline", R"({"hardware":"abacus"})"))["error"]["field"] == "hardware");
    const json ok = json::parse(tally::api::call("roofline", R"({"dtype":"fp32","seq":512})"));
    REQUIRE(ok["ok"] == true);
    CHECK(ok["result"]["element_bytes"] == 4.0);
    CHECK(ok["result"]["ops"].size() == 11);
}

TEST_CASE("roofline with a hardware preset gives the ridge point and each op's bound") {
    const json presets = tally::api::invoke("presets", json::object());
    REQUIRE(!presets["hardware"].empty());
    const json& hw = presets["hardware"][0];
    const std::string id = hw["id"];
    const json out = json::parse(tally::api::call("roofline", json{{"hardware", id}, {"dtype", "fp32"}}.dump()));
    REQUIRE(out["ok"] == true);
    const auto& r = out["result"];
    const double peak = hw["peak_flops"]["fp32"].get<double>();
    const double bw = hw["memory_bandwidth_bytes_per_s"].get<double>();
    CHECK(r["ridge_flops_per_byte"].get<double>() == Approx(peak / bw));
    for (const auto& op : r["ops"]) {
        CHECK(op["attainable_flops_per_s"].get<double>() <= peak);
        CHECK(op["bound"] == (op["intensity"].get<double>() * bw < peak ? "memory" : "compute"));
    }
}

TEST_CASE("gemm_intensity: at n = 1024 on a 243 GFLOP/s, 23 GB/s core, ikj is memory-bound and simd compute-bound") {
    // peak and bandwidth as measured by `tally bench probe` on the Zen 5 bench machine (BENCHMARKS.md)
    const json out = json::parse(
        tally::api::call("gemm_intensity", R"({"n":1024,"peak_flops_per_s":243e9,"bandwidth_bytes_per_s":23e9})"));
    REQUIRE(out["ok"] == true);
    std::map<std::string, json> rows;
    for (const auto& row : out["result"]["rows"]) rows[row["kernel"]] = row;
    CHECK(rows["ikj"]["bound"] == "memory");
    CHECK(rows["ikj"]["attainable_flops_per_s"].get<double>() == Approx(23e9 * rows["ikj"]["intensity"].get<double>()));
    CHECK(rows["simd"]["bound"] == "compute");
    CHECK(rows["simd"]["attainable_flops_per_s"].get<double>() == 243e9);
    const json half = json::parse(tally::api::call("gemm_intensity", R"({"n":64,"peak_flops_per_s":1e9})"));
    CHECK(half["error"]["field"] == "bandwidth_bytes_per_s");
}

TEST_CASE(
    "roofline with a preset and intensities gives the same bounds as roofline_custom on that roof (one call per roof)") {
    const json r = json::parse(tally::api::call(
        "roofline", R"({"hardware":"h100-sxm","dtype":"bf16","intensity":[0.01,300,31622.8]})"))["result"];
    json custom_args = {{"peak_flops_per_s", r["peak_flops_per_s"]},
                        {"bandwidth_bytes_per_s", r["bandwidth_bytes_per_s"]},
                        {"intensity", {0.01, 300, 31622.8}}};
    const json custom = json::parse(tally::api::call("roofline_custom", custom_args.dump()))["result"];
    CHECK(r["points"] == custom["points"]);
    CHECK(r["points"][0]["bound"] == "memory");
    CHECK(r["points"][2]["bound"] == "compute");
    CHECK(json::parse(tally::api::call("roofline", R"({"hardware":"h100-sxm","intensity":[-1]})"))["error"]["field"] ==
          "intensity");
}

TEST_CASE(
    "H100 SXM's bf16 ridge is about 295 FLOP/byte; left of it an operation is memory-bound, at and right of it compute-bound") {
    // 989.4 TFLOP/s dense bf16 over 3.35 TB/s (NVIDIA H100 datasheet, SXM5).
    const double peak = 989.4e12, bandwidth = 3.35e12;
    CHECK(rl::ridge(peak, bandwidth) == Approx(295.34).epsilon(1e-4));
    CHECK(rl::bound(100, peak, bandwidth) == rl::Bound::Memory);
    CHECK(rl::bound(rl::ridge(peak, bandwidth), peak, bandwidth) == rl::Bound::Compute);
    CHECK(rl::bound(1000, peak, bandwidth) == rl::Bound::Compute);
    CHECK(std::string(rl::to_string(rl::Bound::Memory)) == "memory");
    CHECK(rl::attainable(100, peak, bandwidth) == 100 * bandwidth);
}

TEST_CASE("a bf16 GEMM writing fp32 C moves 2 bytes per input element and 4 per output element") {
    const rl::Traffic t = rl::matmul_min_traffic(4096, 4096, 4096, 2, 4);
    CHECK(t.flops == 2.0 * 4096 * 4096 * 4096);
    CHECK(t.bytes == (2.0 * 4096 * 4096) * 2 + 4096.0 * 4096 * 4);
    // With one element size for all three it equals the single-size count.
    CHECK(rl::matmul_min_traffic(64, 32, 16, 4, 4).bytes == rl::matmul_min_traffic(64, 32, 16, 4).bytes);
}
