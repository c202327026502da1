// Tests of engine/api/api_kvcache.cpp: kv_cache with its capacity verdicts and decode bound.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api_helpers.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("Llama 3 8B decodes at most ~196 tokens/s on one H100 SXM at 8k context (3.35 TB/s over 17.1 GB per step)") {
    // H100 SXM HBM3 3.35 TB/s (NVIDIA H100 datasheet). Per step: bf16 weights 2 · 8,030,261,248 bytes plus
    // a bf16 KV cache of 2 · 32 layers · 8 kv heads · 128 · 2 bytes · 8192 tokens = 2^30 bytes.
    const json r = ok("kv_cache", {{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    CHECK(r["weights_bytes"] == 16'060'522'496);
    CHECK(r["kv_cache_bytes"] == 1'073'741'824);
    CHECK(r["decode_bytes_per_step"] == 17'134'264'320);
    CHECK(r["memory_bandwidth_bytes_per_s"].get<double>() == 3.35e12);
    CHECK(r["decode_tokens_per_s_bound"].get<double>() == 3.35e12 / 17'134'264'320.0);
    CHECK(r["decode_tokens_per_s_bound"].get<double>() == Approx(195.5).epsilon(0.001));
    CHECK(r["decode_batch_tokens_per_s_bound"] == r["decode_tokens_per_s_bound"]);
    // Batch 16: each step reads the weights once and 16 caches; per-sequence speed drops, the batch's rises.
    const json b =
        ok("kv_cache", {{"model", "llama-3-8b"}, {"context", 8192}, {"batch", 16}, {"hardware", "h100-sxm"}});
    CHECK(b["decode_bytes_per_step"] == 16'060'522'496 + 16 * 1'073'741'824ull);
    CHECK(b["decode_tokens_per_s_bound"].get<double>() < r["decode_tokens_per_s_bound"].get<double>());
    CHECK(b["decode_batch_tokens_per_s_bound"].get<double>() == b["decode_tokens_per_s_bound"].get<double>() * 16);
    CHECK(b["decode_batch_tokens_per_s_bound"].get<double>() > 8 * r["decode_tokens_per_s_bound"].get<double>());
    // No hardware preset, no bandwidth: no bound (capacity_bytes alone says nothing about speed).
    CHECK_FALSE(ok("kv_cache", {{"model", "llama-3-8b"}, {"context", 8192}, {"capacity_bytes", 80e9}})
                    .contains("decode_tokens_per_s_bound"));
}
