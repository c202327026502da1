// Tests of engine/api/api_training.cpp: training_cost and mfu, their Chinchilla reference and warnings.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api_helpers.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("training_cost from a preset: 1024 H100 at 50% MFU, cost = GPU-hours × price") {
    const json r = ok("training_cost", {{"model", "llama-3-70b"},
                                        {"seq", 8192},
                                        {"tokens", 15e12},
                                        {"hardware", "h100-sxm"},
                                        {"gpus", 1024},
                                        {"mfu", 0.5},
                                        {"dollars_per_gpu_hour", 2}});
    CHECK(r["flops_basis"] == "exact");
    CHECK(r["peak_flops_per_s"] == 989.5e12);
    CHECK(r["cost_dollars"].get<double>() == r["seconds"].get<double>() / 3600 * 1024 * 2);
    CHECK(r["gpu_seconds"].get<double>() == r["seconds"].get<double>() * 1024);
    CHECK(r["total_flops"].get<double>() > r["six_nd"].get<double>());  // attention at 8k context
}

TEST_CASE("mfu from tokens per second inverts training_cost") {
    // At MFU u the run processes tokens at u · gpus · peak / model FLOPs per token.
    const json f = ok("flops", {{"model", "llama-2-7b"}, {"seq", 4096}});
    const double per_token = f["per_token"]["model"].get<double>();
    const double tokens_per_s = 0.4 * 8 * 989.5e12 / per_token;
    const json r = ok("mfu", {{"model", "llama-2-7b"},
                              {"seq", 4096},
                              {"tokens_per_second", tokens_per_s},
                              {"gpus", 8},
                              {"hardware", "h100-sxm"}});
    CHECK(r["mfu"].get<double>() == Approx(0.4).epsilon(1e-12));
}

TEST_CASE("Chinchilla-optimal tokens for 70B parameters are 1.4T (20 per parameter)") {
    // Hoffmann et al. 2022 trained Chinchilla, 70B parameters, on 1.4T tokens: ~20 tokens per parameter.
    const json r = ok("training_cost",
                      {{"params", 70e9}, {"tokens", 1.4e12}, {"hardware", "h100-sxm"}, {"gpus", 1024}, {"mfu", 0.5}});
    CHECK(r["chinchilla_tokens"].get<double>() == 1.4e12);
    CHECK(r["tokens_per_param"].get<double>() == 20);
    CHECK(r["chinchilla_params"] == "given");
    // Llama 3 70B on 15T tokens is ~10x past the Chinchilla point (a deliberate over-training for inference).
    const json l = ok("training_cost", {{"model", "llama-3-70b"},
                                        {"seq", 8192},
                                        {"tokens", 15e12},
                                        {"hardware", "h100-sxm"},
                                        {"gpus", 1024},
                                        {"mfu", 0.5}});
    const json p = ok("params", {{"model", "llama-3-70b"}});
    CHECK(l["chinchilla_params"] == "total");
    CHECK(l["chinchilla_tokens"].get<double>() == 20 * p["total"].get<double>());
    CHECK(l["tokens_per_param"].get<double>() == 15e12 / p["total"].get<double>());
    CHECK(l["tokens_per_param"].get<double>() == Approx(213).epsilon(0.01));
    // flops reports the same reference, only when tokens are given.
    const json f = ok("flops", {{"model", "llama-3-70b"}, {"seq", 8192}, {"tokens", 15e12}});
    CHECK(f["chinchilla_tokens"] == l["chinchilla_tokens"]);
    CHECK(f["tokens_per_param"] == l["tokens_per_param"]);
    CHECK_FALSE(ok("flops", {{"model", "llama-3-70b"}}).contains("chinchilla_tokens"));
}

TEST_CASE("a mixture of experts takes its Chinchilla reference from the active parameters") {
    const json p = ok("params", {{"model", "mixtral-8x7b"}});
    REQUIRE(p["active"].get<double>() < p["total"].get<double>());
    const json r =
        ok("training_cost",
           {{"model", "mixtral-8x7b"}, {"tokens", 1e12}, {"hardware", "h100-sxm"}, {"gpus", 8}, {"mfu", 0.4}});
    CHECK(r["chinchilla_params"] == "active");
    CHECK(r["chinchilla_tokens"].get<double>() == 20 * p["active"].get<double>());
    CHECK(r["six_nd"].get<double>() == 6 * p["active"].get<double>() * 1e12);
}

TEST_CASE("training_cost names the user's input when a figure overflows, never the internal total_flops") {
    const json base = {{"params", 7e9}, {"tokens", 1e12}, {"gpus", 8}, {"peak_tflops", 989}, {"mfu", 0.4}};
    json tokens = base;
    tokens["tokens"] = 1e308;
    CHECK(error("training_cost", tokens)["field"] == "tokens");
    json price = base;
    price["dollars_per_gpu_hour"] = 1e308;  // used to return ok:true with cost_dollars null
    CHECK(error("training_cost", price)["field"] == "dollars_per_gpu_hour");
    json slow = base;
    slow["peak_tflops"] = 1e-300;
    CHECK(error("training_cost", slow)["field"] == "peak_tflops");  // issue 21: the argument given, not its FLOP/s form
    json tiny_mfu = base;
    tiny_mfu["mfu"] = 5e-324;  // used to name peak_flops_per_s
    CHECK(error("training_cost", tiny_mfu)["field"] == "mfu");
}

TEST_CASE("training_cost warns for an implausible price or MFU and stays silent for plausible ones") {
    const json base = {{"params", 7e9},      {"tokens", 1e12}, {"gpus", 8},
                       {"peak_tflops", 989}, {"mfu", 0.4},     {"dollars_per_gpu_hour", 2.5}};
    CHECK_FALSE(ok("training_cost", base).contains("warnings"));
    json price = base;
    price["dollars_per_gpu_hour"] = 1000;
    const json priced = ok("training_cost", price);
    REQUIRE(priced["warnings"].size() == 1);
    CHECK(priced["warnings"][0]["field"] == "dollars_per_gpu_hour");
    json mfu = base;
    mfu["mfu"] = 0.9;
    CHECK(ok("training_cost", mfu)["warnings"][0]["field"] == "mfu");
}

TEST_CASE("mfu above 100 % of peak is returned with a warning (4,331 % used to pass without a word)") {
    const json plausible = ok("mfu", {{"params", 7e9}, {"tokens_per_second", 3e3}, {"gpus", 1}, {"peak_tflops", 989}});
    CHECK_FALSE(plausible.contains("warnings"));
    const json impossible = ok("mfu", {{"params", 7e9}, {"tokens_per_second", 1e6}, {"gpus", 1}, {"peak_tflops", 989}});
    CHECK(impossible["mfu"].get<double>() > 1);
    REQUIRE(impossible["warnings"].size() == 1);
    CHECK(impossible["warnings"][0]["field"] == "tokens_per_second");
    CHECK(impossible["warnings"][0]["message"].get<std::string>().find("100 %") != std::string::npos);
}

TEST_CASE("training_cost checks dtype even when a peak is given (banana used to be echoed)") {
    CHECK(error("training_cost", {{"params", 7e9},
                                  {"tokens", 1e12},
                                  {"gpus", 8},
                                  {"peak_tflops", 989},
                                  {"mfu", 0.4},
                                  {"dtype", "banana"}})["field"] == "dtype");
}

TEST_CASE("training_cost with params alone: full recomputation is 8ND of hardware FLOPs, other settings need a model") {
    // Korthikanti et al. 2022, sec. 5: full recomputation adds one forward pass, 2N per token, to 6N.
    const json base = {{"params", 1e9}, {"tokens", 1e9}, {"gpus", 1}, {"mfu", 0.5}, {"peak_tflops", 100}};
    json full = base;
    full["recompute"] = "full";
    CHECK(ok("training_cost", base)["total_flops"] == 6e18);
    CHECK(ok("training_cost", full)["total_flops"] == 8e18);
    json selective = base;
    selective["recompute"] = "selective";
    CHECK(error("training_cost", selective)["field"] == "recompute");
    json causal = base;
    causal["attention_flops"] = "causal";
    CHECK(error("training_cost", causal)["field"] == "attention_flops");
}

TEST_CASE("training_cost of a model carries the flops answer its total rests on; params alone carry none") {
    const json args = {{"model", "llama-3-8b"},  {"seq", 8192},  {"tokens", 15e12},
                       {"hardware", "h100-sxm"}, {"gpus", 1024}, {"mfu", 0.4}};
    const json r = ok("training_cost", args);
    CHECK(r["flops"] == ok("flops", {{"model", "llama-3-8b"}, {"seq", 8192}, {"tokens", 15e12}}));
    // The exact basis multiplies the same per-token training FLOPs by the tokens.
    CHECK(r["total_flops"].get<double>() ==
          Approx(r["flops"]["per_token"]["training"].get<double>() * 15e12).epsilon(1e-12));
    const json p = ok("training_cost",
                      {{"params", 8e9}, {"tokens", 15e12}, {"hardware", "h100-sxm"}, {"gpus", 1024}, {"mfu", 0.4}});
    CHECK_FALSE(p.contains("flops"));
}
