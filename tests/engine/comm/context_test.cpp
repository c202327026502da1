// Tests of engine/src/comm/context.cpp and its API (api_context.cpp): causal attention work per context-parallel rank
// against the closed forms of contiguous and load-balanced chunks, and one ring-attention step.
#include <catch2/catch.hpp>

#include "api_helpers.h"
#include "tally/comm/context.h"
#include "tally/base/error.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("causal_work: contiguous chunks leave the last rank 2cp-1 times the first; balanced chunks even it",
          "[context]") {
    // 8 tokens over 2 ranks: queries 0..3 score 1+2+3+4 = 10 pairs, queries 4..7 score 5+6+7+8 = 26.
    const tally::context::RankWork naive = tally::context::causal_work(8, 2, false);
    REQUIRE(naive.pairs.size() == 2);
    CHECK(naive.pairs[0] == 10);
    CHECK(naive.pairs[1] == 26);
    CHECK(naive.max_over_mean == Approx(26.0 / 18));
    // Balanced, 4 chunks of 2: rank 0 holds chunks 0 and 3 (1+2 + 7+8 = 18), rank 1 chunks 1 and 2 (3+4 + 5+6).
    const tally::context::RankWork even = tally::context::causal_work(8, 2, true);
    CHECK(even.pairs[0] == 18);
    CHECK(even.pairs[1] == 18);
    CHECK(even.max_over_mean == Approx(1));
    // At scale the contiguous split tends to (2cp-1)/cp: the slowest rank does almost twice the mean.
    const double cp = 16;
    CHECK(tally::context::causal_work(131072, 16, false).max_over_mean == Approx((2 * cp - 1) / cp).epsilon(1e-3));
    CHECK(tally::context::causal_work(131072, 16, true).max_over_mean == Approx(1).epsilon(1e-9));
    CHECK_THROWS_AS(tally::context::causal_work(100, 8, true), tally::InputError);
    CHECK_THROWS_AS(tally::context::causal_work(8, 9, false), tally::InputError);
}

TEST_CASE("context_parallel: a ring step's K, V transfer against its block compute (Llama 3 405B at 128K)",
          "[context]") {
    // Llama 3 405B: 128 query heads, 8 KV heads of 128 (Dubey et al. 2024, table 3); CP 16 as in its
    // long-context stage (sec. 3.3.2). Blocks of 8,192 tokens over the network card (cp > 8).
    const json r = ok("context_parallel", {{"model", "llama-3-405b"}, {"seq", 131072}, {"cp", 16}});
    const json& ring = r["ring"];
    CHECK(ring["block_tokens"] == 8192);
    CHECK(ring["block_flops"].get<double>() == Approx(4.0 * 8192 * 8192 * 128 * 128));
    CHECK(ring["kv_block_bytes"].get<double>() == Approx(2.0 * 8192 * 8 * 128 * 2));
    CHECK(ring["link_bytes_per_s"].get<double>() == Approx(0.8 * 50e9));
    CHECK(ring["hidden"] == true);
    // Transfer hides from 2 n_kv e peak / (4 a link) tokens a block.
    CHECK(ring["min_block_tokens"].get<double>() == Approx(2.0 * 8 * 2 * 989.5e12 / (4 * 128 * 0.8 * 50e9)));
    CHECK(r["balanced"]["max_over_mean"].get<double>() == Approx(1));
    CHECK(r["contiguous"]["max_over_mean"].get<double>() == Approx(31.0 / 16).epsilon(1e-3));
    CHECK(error("context_parallel", {{"model", "llama-3-405b"}, {"seq", 1000}, {"cp", 3}})["field"] == "cp");
    CHECK(error("context_parallel", {{"model", "llama-3-405b"}, {"cp", 1}})["field"] == "cp");
}
