// Tests of random_routing (engine/src/parallel/moe.cpp) and the moe_routing API (api_moe.cpp): active against total
// parameters of DeepSeek-V3 and gpt-oss-120b against their published counts, token drops against an exact
// binomial enumeration and the normal approximation, and the all-to-all bytes per token and layer.
#include <catch2/catch.hpp>

#include <cmath>

#include "api_helpers.h"
#include "tally/base/error.h"
#include "tally/parallel/moe.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("moe_routing: DeepSeek-V3 has 671B parameters, 37B active; gpt-oss-120b 116.83B, 5.13B active", "[moe]") {
    // DeepSeek-V3 technical report, abstract: "671B total parameters with 37B activated for each token".
    const json ds = ok("moe_routing", {{"model", "deepseek-v3"}});
    CHECK(ds["params"]["total"].get<double>() / 1e9 == Approx(671.03).epsilon(1e-4));
    CHECK(ds["params"]["active"].get<double>() / 1e9 == Approx(37.55).epsilon(1e-3));
    CHECK(ds["experts"] == 256);
    CHECK(ds["top_k"] == 8);
    CHECK(ds["shared_experts"] == 1);
    // gpt-oss model card, Table 1: 116.83B total, 5.13B active, counting the unembedding but not the embedding.
    const json oss = ok("moe_routing", {{"model", "gpt-oss-120b"}});
    CHECK(oss["params"]["total"].get<double>() / 1e9 == Approx(116.83).epsilon(1e-4));
    CHECK(oss["params"]["active_without_embedding"].get<double>() / 1e9 == Approx(5.13).epsilon(1e-3));
    CHECK(oss["params"]["active_fraction"].get<double>() ==
          Approx(oss["params"]["active"].get<double>() / oss["params"]["total"].get<double>()));
}

TEST_CASE("random_routing: exact on a two-token example, normal approximation at scale", "[moe]") {
    // 2 tokens, 2 experts, top-1: an expert's load is Binomial(2, 1/2) = 0, 1, 2 with 1/4, 1/2, 1/4. Capacity
    // ceil(0.5 x 1) = 1 drops one token when both pick it: E[max(0, X - 1)] = 1/4 of a mean load of 1.
    const tally::RandomRouting tiny = tally::random_routing(2, 2, 1, 0.5);
    CHECK(tiny.capacity == 1);
    CHECK(tiny.expected_dropped_fraction == Approx(0.25));
    CHECK(tiny.overflow_probability == Approx(0.25));
    // At a mean load of 12,500 and capacity factor 1, E[max(0, X - mu)] ~ sigma / sqrt(2 pi).
    const tally::RandomRouting big = tally::random_routing(100000, 64, 8, 1.0);
    CHECK(big.mean_load == Approx(12500));
    const double sigma = std::sqrt(100000 * 0.125 * 0.875);
    CHECK(big.load_stddev == Approx(sigma));
    CHECK(big.expected_dropped_fraction == Approx(sigma / std::sqrt(2 * M_PI) / 12500).epsilon(0.01));
    CHECK(big.overflow_probability == Approx(0.5).epsilon(0.02));
    // Switch Transformer's remedy: a capacity factor of 1.25 (sec. 2.2) leaves almost nothing to drop here.
    CHECK(tally::random_routing(100000, 64, 8, 1.25).expected_dropped_fraction < 1e-12);
    CHECK_THROWS_AS(tally::random_routing(0, 8, 2, 1), tally::InputError);
    CHECK_THROWS_AS(tally::random_routing(10, 8, 9, 1), tally::InputError);
    CHECK_THROWS_AS(tally::random_routing(10, 8, 2, 0), tally::InputError);
}

TEST_CASE("moe_routing: all-to-all bytes per token and layer are 2 k h e (ep-1)/ep forward, twice that a step",
          "[moe]") {
    // Mixtral 8x7B: top-2, h 4096, bf16, experts over 8 GPUs of one node, dropless.
    const json r = ok("moe_routing", {{"model", "mixtral-8x7b"}, {"ep", 8}, {"seq", 4096}});
    const double forward = 2 * 2 * 4096 * 2 * 7.0 / 8;
    CHECK(r["all_to_all_bytes_per_token_forward"].get<double>() == Approx(forward));
    CHECK(r["all_to_all_bytes_per_token_step"].get<double>() == Approx(2 * forward));
    CHECK(r["local_experts"] == 1);
    CHECK(r["tokens_per_expert"].get<double>() == Approx(2 * 4096 * 8 / 8.0));
    // The dispatch's send buffer is the 2 x 4,096 routed rows of 4,096 bf16 values; its time is the collective's.
    const double message = 2 * 4096 * 4096 * 2.0;
    CHECK(r["all_to_all"]["message_bytes"].get<double>() == Approx(message));
    const json a2a =
        ok("collective",
           {{"collective", "all_to_all"}, {"message_bytes", message}, {"ranks_per_node", 8}, {"hardware", "h100-sxm"}});
    CHECK(r["all_to_all"]["seconds"].get<double>() == Approx(a2a["seconds"].get<double>()));
    // Capacity 1.25 pads each expert to ceil(1.25 x 8,192) slots and sends the padding too.
    const json cf = ok("moe_routing", {{"model", "mixtral-8x7b"}, {"ep", 8}, {"seq", 4096}, {"capacity_factor", 1.25}});
    CHECK(cf["expert_capacity"].get<double>() == 10240);
    CHECK(cf["random_routing"]["mean_load"].get<double>() == Approx(8192));
}

TEST_CASE("moe_routing refuses dense models and an ep that does not divide the experts", "[moe]") {
    CHECK(error("moe_routing", {{"model", "llama-2-7b"}})["field"] == "model");
    CHECK(error("moe_routing", {{"model", "mixtral-8x7b"}, {"ep", 3}})["field"] == "ep");
    CHECK(error("moe_routing", {{"model", "mixtral-8x7b"}, {"capacity_factor", 100}})["field"] == "capacity_factor");
    CHECK(error("moe_routing", {{"model", "deepseek-v3"}, {"ep", 4}, {"hardware", "h100-sxm"}, {"seq", 0}})["field"] ==
          "seq");
}
