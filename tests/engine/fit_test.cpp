// Tests of engine/src/fit.cpp and kvcache.cpp: the solvers and inference memory.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/fit.h"
#include "tally/kvcache.h"

using tally_test::preset;

TEST_CASE("the largest model trainable on 8 × 80 GB is 40B at 16 B/param and about 53B at 12 B/param") {
    // CS336 lecture 2: 8 H100s, weights + grads + AdamW states, activations excluded.
    const std::uint64_t total = 8 * 80'000'000'000ull;
    CHECK(tally::largest_model_params(total, tally::find_recipe("bf16_mixed_adamw").precision) == 40'000'000'000u);
    CHECK(tally::largest_model_params(total, tally::find_recipe("bf16_adamw_no_master").precision) == 53'333'333'333u);
}

TEST_CASE("one 80 GB GPU at 12 B/param fits about 6.7B parameters, not 53B (a mistake in the seed notes)") {
    CHECK(tally::largest_model_params(80'000'000'000ull, tally::find_recipe("bf16_adamw_no_master").precision) ==
          6'666'666'666u);
}

TEST_CASE("min_gpus finds the fewest GPUs: the budget fits there and not one data-parallel rank fewer") {
    const auto c = preset("llama-2-70b");
    tally::TrainingSetup st;
    st.seq = 4096;
    st.zero = 3;
    st.tp = 8;
    st.sequence_parallel = true;
    st.flash_attention = true;
    st.recompute = tally::Recompute::Selective;
    const std::uint64_t capacity = 80'000'000'000ull;
    const std::int64_t n = tally::min_gpus(c, st, capacity, 1 << 20);
    REQUIRE(n > 8);
    CHECK(n % 8 == 0);
    st.gpus = n;
    CHECK(tally::memory_budget(c, st).bytes.total <= capacity);
    st.gpus = n - 8;
    CHECK(tally::memory_budget(c, st).bytes.total > capacity);
}

TEST_CASE("min_gpus reports 0 when no data-parallel degree fits (ZeRO 0 never shards)") {
    const auto c = preset("llama-2-70b");
    tally::TrainingSetup st;  // ZeRO 0: 16 B/param × 69B on every GPU
    CHECK(tally::min_gpus(c, st, 80'000'000'000ull, 1 << 20) == 0);
}

TEST_CASE("Llama-2-7B's bf16 KV cache is 0.5 MiB per token; GQA makes Llama-2-70B's 320 KiB, 8× less than MHA") {
    // 2 · L · n_kv · d · 2 bytes: 2·32·32·128·2 = 524,288 and 2·80·8·128·2 = 327,680.
    CHECK(tally::kv_cache(preset("llama-2-7b"), 1, 1, tally::DType::BF16, tally::DType::BF16).bytes_per_token == 524'288u);
    const auto k = tally::kv_cache(preset("llama-2-70b"), 4096, 8, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.bytes_per_token == 327'680u);
    CHECK(k.kv_cache_bytes == 327'680ull * 4096 * 8);  // 10 GiB
    CHECK(k.weights_bytes == 2 * 68'976'648'192ull);
}
