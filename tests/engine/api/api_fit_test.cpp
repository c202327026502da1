// Tests of engine/api/api_fit.cpp: the fit method in both modes.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api_helpers.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("fit finds 40B on 8 × 80 GB at 16 B/param and errors name the field") {
    // The seed notes' 80 GB stays reproducible with an explicit capacity.
    CHECK(ok("fit", {{"gpus", 8}, {"capacity_bytes", 80e9}})["max_params"] == 40'000'000'000ull);
    // The H100 preset: 8 × (85,520,809,984 − 512 MiB − ceil(5 %)) / 16 bytes.
    const std::uint64_t usable = 85'520'809'984ull - (512ull << 20) - 4'276'040'500ull;
    CHECK(ok("fit", {{"gpus", 8}, {"hardware", "h100-sxm"}})["max_params"] == usable * 8 / 16);
    CHECK(error("fit", {{"gpus", 0}, {"hardware", "h100-sxm"}})["field"] == "gpus");
    CHECK(error("memory_budget", {{"model", "llama-2-7b"}, {"tp", 3}, {"gpus", 3}})["field"] == "tp");
    CHECK(error("memory_budget", {{"model", "llama-2-7b"}, {"recipe", "magic"}})["field"] == "recipe");
    CHECK(error("memory_budget", {{"model", "llama-2-7b"}, {"seq", 1.5}})["field"] == "seq");
    CHECK(error("params", {{"hf_config", "{\"model_type\": \"llama\""}})["field"] == "hf_config");
}

TEST_CASE("fit largest_model honours zero, tp and pp (ZeRO paper Table 2: 7.6B at stage 1 on 64 × 32 GB)") {
    const json r = ok("fit", {{"gpus", 64}, {"capacity_bytes", 32'000'000'000ll}, {"zero", 1}});
    CHECK(r["zero"] == 1);
    CHECK(r["max_params"] == 64 * 32'000'000'000ull / 268);  // 4Ψ + 12Ψ/64 per GPU
    const json mp = ok("fit", {{"gpus", 1024}, {"capacity_bytes", 32'000'000'000ll}, {"zero", 0}, {"tp", 16}});
    CHECK(mp["max_params"] == 32'000'000'000ull);  // 16 × 2B
    CHECK(mp["dp"] == 64);
    CHECK(error("fit", {{"gpus", 6}, {"capacity_bytes", 32'000'000'000ll}, {"tp", 4}})["field"] == "gpus");
}

TEST_CASE("fit largest_model with a model searches its depth with activations at the given seq and micro-batch") {
    // With a model the default mode is min_gpus (as in `tally fit`), so largest_model is asked for by name.
    const json args = {{"mode", "largest_model"}, {"gpus", 8},   {"hardware", "h100-sxm"},
                       {"model", "llama-2-7b"},   {"seq", 4096}, {"flash_attention", true}};
    const json r = ok("fit", args);
    REQUIRE(r["layers"].is_number_integer());
    CHECK(r["budget"]["per_gpu_bytes"]["total"].get<std::uint64_t>() <= r["usable_bytes_per_gpu"].get<std::uint64_t>());
    CHECK(r["max_params_with_activations"].get<std::uint64_t>() < r["max_params"].get<std::uint64_t>());
    json longer = args;
    longer["seq"] = 16384;
    CHECK(ok("fit", longer)["layers"].get<std::int64_t>() < r["layers"].get<std::int64_t>());
}
