// Tests of engine/api/api_inference.cpp: the JSON methods inference, matmul_roofline, compute_units and
// checkpoint_size map their arguments to the engine modules, return base units, and name the field at fault.
#include <catch2/catch.hpp>

#include <cmath>

#include "tally/api.h"

using nlohmann::json;

namespace {

json call(const char* method, const json& args) { return json::parse(tally::api::call(method, args.dump())); }

json ok(const char* method, const json& args) {
    const json envelope = call(method, args);
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == true);
    return envelope["result"];
}

json error(const json& args) {
    const json envelope = call("inference", args);
    REQUIRE(envelope["ok"] == false);
    return envelope["error"];
}

}  // namespace

TEST_CASE("the inference method reports the decode step at the batch asked for and a sweep of batches",
          "[api][inference]") {
    const json r =
        ok("inference", {{"model", "llama-3-8b"}, {"context", 4096}, {"batch", 8}, {"hardware", "h100-sxm"}});
    CHECK(r["batch"] == 8);
    CHECK(r["decode"]["batch"] == 8);
    CHECK(r["sweep"].size() >= 4);
    CHECK(r["sweep"][0]["batch"] == 1);
    CHECK(r["kv_cache_bytes"].get<double>() == 8 * r["kv_bytes_per_sequence"].get<double>());
    // 4096 tokens of Llama 3 8B's GQA cache keep decoding memory-bound: no crossover, and the reason says why.
    const json long_mha = ok("inference", {{"model", "llama-2-7b"}, {"context", 32768}, {"hardware", "h100-sxm"}});
    CHECK(long_mha["crossover_batch"].is_null());
    CHECK(long_mha["crossover_reason"].get<std::string>().find("memory-bound") != std::string::npos);
}

TEST_CASE("inference names the field at fault", "[api][inference]") {
    CHECK(error({{"model", "llama-3-8b"}, {"context", 4096}})["field"] == "hardware");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 0}, {"hardware", "h100-sxm"}})["field"] == "context");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 64}, {"batch", 0}, {"hardware", "h100-sxm"}})["field"] ==
          "batch");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 64}, {"kv_dtype", "fp7"}, {"hardware", "h100-sxm"}})["field"] ==
          "kv_dtype");
    CHECK(
        error(
            {{"model", "llama-3-8b"}, {"context", 64}, {"compute_dtype", "int3"}, {"hardware", "h100-sxm"}})["field"] ==
        "compute_dtype");
}

TEST_CASE("a weight matmul's intensity grows with the tokens and crosses the ridge", "[api][roofline]") {
    const auto at = [](int tokens) {
        const json envelope =
            call("matmul_roofline", {{"m", tokens}, {"k", 4096}, {"n", 4096}, {"hardware", "h100-sxm"}});
        REQUIRE(envelope["ok"] == true);
        return envelope["result"];
    };
    // 2mnk FLOPs over 2(mk + kn + mn) bytes in bf16: one token is about 1 FLOP per byte.
    CHECK(at(1)["intensity"].get<double>() == Approx(2.0 * 4096 * 4096 / (2.0 * (4096 + 4096 * 4096 + 4096))));
    CHECK(at(1)["bound"] == "memory");
    CHECK(at(64)["intensity"].get<double>() > at(8)["intensity"].get<double>());
    CHECK(at(8192)["bound"] == "compute");
    CHECK(call("matmul_roofline", {{"m", 0}, {"k", 1}, {"n", 1}, {"hardware", "h100-sxm"}})["error"]["field"] == "m");
}

TEST_CASE("compute_units turns FLOPs or 6ND into petaFLOP/s-days, GPU-seconds and GPUs for a deadline",
          "[api][units]") {
    // Brown et al. 2020, table D.1: GPT-3's 3.14e23 FLOPs are about 3,640 PF/s-days.
    CHECK(ok("compute_units", {{"flops", 3.14e23}})["petaflop_s_days"].get<double>() == Approx(3634.26).epsilon(1e-4));
    const json r = ok("compute_units",
                      {{"params", 70e9}, {"tokens", 15e12}, {"hardware", "h100-sxm"}, {"mfu", 0.4}, {"days", 30}});
    CHECK(r["flops"].get<double>() == 6 * 70e9 * 15e12);
    const double gpu_seconds = 6 * 70e9 * 15e12 / (989.5e12 * 0.4);  // H100 dense bf16 989.5 TFLOP/s (datasheet)
    const double gpu_days = gpu_seconds / 86400;
    CHECK(r["gpu_seconds"].get<double>() == Approx(gpu_seconds));
    CHECK(r["gpus_for_days"].get<std::int64_t>() == static_cast<std::int64_t>(std::ceil(gpu_days / 30)));
    CHECK(call("compute_units", {{"flops", 1e20}, {"hardware", "h100-sxm"}, {"mfu", 2}})["error"]["field"] == "mfu");
    CHECK(call("compute_units", {{"params", 70e9}, {"tokens", 0}})["error"]["field"] == "tokens");
    CHECK(call("compute_units", {{"flops", 1e20}, {"hardware", "h100-sxm"}, {"days", -1}})["error"]["field"] == "days");
}

TEST_CASE("checkpoint_size reports the recipe's inference and resume bytes", "[api][checkpoint]") {
    const json r = ok("checkpoint_size", {{"model", "llama-2-7b"}});
    CHECK(r["recipe"] == "bf16_mixed_adamw");
    CHECK(r["resume_bytes_per_param"].get<double>() == 14);
    CHECK(r["resume_bytes"].get<double>() == 14 * r["params"].get<double>());
    CHECK(ok("checkpoint_size", {{"model", "llama-2-7b"}, {"recipe", "fp32_adamw"}})["resume_bytes_per_param"]
              .get<double>() == 12);
    CHECK(call("checkpoint_size", {{"model", "llama-2-7b"}, {"recipe", "nope"}})["error"]["field"] == "recipe");
}

TEST_CASE("an fp4 matmul moves half a byte an element and meets B300's 13.5 PFLOP/s FP4 peak", "[api][roofline]") {
    // 3 · 4096² elements at 0.5 byte (E2M1, scales aside) = 25,165,824 bytes; 2 · 4096³ FLOPs; HGX B300:
    // 108 PFLOPS dense FP4 / 8 GPUs, 8 TB/s, so the ridge is 13.5e15 / 8e12 = 1,687.5 FLOP/byte.
    const json r =
        ok("matmul_roofline", {{"m", 4096}, {"k", 4096}, {"n", 4096}, {"hardware", "b300"}, {"dtype", "fp4"}});
    CHECK(r["bytes"] == 3.0 * 4096 * 4096 / 2);
    CHECK(r["peak_flops_per_s"] == 13.5e15);
    CHECK(r["ridge_flops_per_byte"] == 1687.5);
    CHECK(r["bound"] == "compute");
    // Hopper has no FP4 tensor cores: an error naming dtype.
    const json bad =
        call("matmul_roofline", {{"m", 1}, {"k", 1}, {"n", 1}, {"hardware", "h100-sxm"}, {"dtype", "fp4"}});
    CHECK(bad["ok"] == false);
    CHECK(bad["error"]["field"] == "dtype");
}
