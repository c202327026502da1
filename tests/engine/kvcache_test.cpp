// Tests of engine/src/kvcache.cpp: inference weights plus KV cache, what fits beside the weights, and the
// bandwidth bound on decoding.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/kvcache.h"

using tally_test::preset;

TEST_CASE("Llama-2-7B's bf16 KV cache is 0.5 MiB per token; GQA makes Llama-2-70B's 320 KiB, 8× less than MHA") {
    // 2 · L · n_kv · d · 2 bytes: 2·32·32·128·2 = 524,288 and 2·80·8·128·2 = 327,680.
    CHECK(tally::kv_cache(preset("llama-2-7b"), 1, 1, tally::DType::BF16, tally::DType::BF16).bytes_per_token == 524'288u);
    const auto k = tally::kv_cache(preset("llama-2-70b"), 4096, 8, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.bytes_per_token == 327'680u);
    CHECK(k.kv_cache_bytes == 327'680ull * 4096 * 8);  // 10 GiB
    CHECK(k.weights_bytes == 2 * 68'976'648'192ull);
    CHECK(k.mha_kv_cache_bytes == 8 * k.kv_cache_bytes);  // 64 query heads, 8 K/V heads
}

TEST_CASE("kv_capacity: the batch and context that fit beside the weights, and none when the weights alone overflow") {
    const auto k = tally::kv_cache(preset("llama-2-7b"), 4096, 1, tally::DType::BF16, tally::DType::BF16);
    const std::uint64_t usable = k.weights_bytes + 3 * k.kv_cache_bytes + 1;
    const tally::KvCapacity fit = tally::kv_capacity(k, 4096, 1, usable);
    CHECK(fit.fits);
    CHECK(fit.max_batch == 3);
    CHECK(fit.max_context == 3 * 4096);
    const tally::KvCapacity none = tally::kv_capacity(k, 4096, 1, k.weights_bytes);
    CHECK_FALSE(none.fits);
    CHECK(none.max_batch == 0);
    CHECK(none.max_context == 0);
}

TEST_CASE("decode_bound streams weights and KV cache once per step: bandwidth / bytes tokens per second per sequence") {
    const auto k = tally::kv_cache(preset("llama-2-7b"), 4096, 4, tally::DType::BF16, tally::DType::BF16);
    const tally::DecodeBound bound = tally::decode_bound(k, 4, 3.35e12);
    CHECK(bound.bytes_per_step == k.total_bytes);
    CHECK(bound.tokens_per_s == 3.35e12 / static_cast<double>(k.total_bytes));
    CHECK(bound.batch_tokens_per_s == 4 * bound.tokens_per_s);
}
