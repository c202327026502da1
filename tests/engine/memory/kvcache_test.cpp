// Tests of engine/src/memory/kvcache.cpp: inference weights plus KV cache, what fits beside the weights, and the
// bandwidth bound on decoding.
#include <catch2/catch.hpp>

#include <string>

#include "accounting_helpers.h"
#include "tally/model/hf_config.h"
#include "tally/memory/kvcache.h"

using tally_test::preset;

TEST_CASE("Llama-2-7B's bf16 KV cache is 0.5 MiB per token; GQA makes Llama-2-70B's 320 KiB, 8× less than MHA") {
    // 2 · L · n_kv · d · 2 bytes: 2·32·32·128·2 = 524,288 and 2·80·8·128·2 = 327,680.
    CHECK(tally::kv_cache(preset("llama-2-7b"), 1, 1, tally::DType::BF16, tally::DType::BF16).bytes_per_token ==
          524'288u);
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

namespace {

// google-t5/t5-small's config.json (the fields that decide the cache): 6 + 6 layers, 8 heads of d_kv 64.
tally::ModelConfig t5_small() {
    return tally::load_hf_config_text(R"({"model_type": "t5", "d_model": 512, "d_kv": 64, "num_heads": 8,
        "d_ff": 2048, "num_layers": 6, "vocab_size": 32128})");
}

}  // namespace

TEST_CASE(
    "t5-small's cache: 12 KiB per generated token in its 6 decoder layers, plus cross-attention K/V fixed at the input") {
    // transformers' T5 past_key_values hold, per decoder layer, self-attention K and V (growing with the
    // generated tokens) and cross-attention K and V (projected once from the encoder output, encoder length).
    // Derived from the config: 2 · L_dec 6 · (8 · 64) · 2 B = 12,288 B per token, the encoder's 6 layers none.
    const auto k = tally::kv_cache(t5_small(), 100, 1, tally::DType::BF16, tally::DType::BF16, 512);
    CHECK(k.bytes_per_token == 12'288u);
    CHECK(k.cross_bytes_per_sequence == 12'288u * 512);
    CHECK(k.kv_cache_bytes == 12'288u * (100 + 512));
    // Generating more tokens grows only the self-attention part; a longer input grows only the cross part.
    const auto longer = tally::kv_cache(t5_small(), 200, 1, tally::DType::BF16, tally::DType::BF16, 512);
    CHECK(longer.kv_cache_bytes - k.kv_cache_bytes == 12'288u * 100);
    CHECK(longer.cross_bytes_per_sequence == k.cross_bytes_per_sequence);
    // Without encoder_context the input is as long as the context.
    CHECK(tally::kv_cache(t5_small(), 100, 2, tally::DType::BF16, tally::DType::BF16).kv_cache_bytes ==
          2 * 12'288u * 200);
    // What fits: the batch's cross-attention K/V are paid before any generated token.
    const std::uint64_t usable = k.weights_bytes + 3 * k.kv_cache_bytes;
    const tally::KvCapacity fit = tally::kv_capacity(k, 100, 1, usable);
    CHECK(fit.max_batch == 3);
    CHECK(fit.max_context == (3 * k.kv_cache_bytes - k.cross_bytes_per_sequence) / 12'288u);
    // By kind: the 6 decoder layers' self-attention keeps the 100 generated tokens, their cross-attention the 512
    // input tokens; K and V of 8 heads of 64 each, 2,048 B a layer a token in bf16.
    const auto groups = tally::kv_layer_groups(t5_small(), k, 100, tally::DType::BF16);
    REQUIRE(groups.size() == 2u);
    CHECK(std::string(groups[0].kind) == "full");
    CHECK(std::string(groups[1].kind) == "cross");
    CHECK(groups[0].layers == 6);
    CHECK(groups[1].layers == 6);
    CHECK(groups[0].bytes_per_layer_token == 2'048u);
    CHECK(groups[0].tokens == 100u);
    CHECK(groups[1].tokens == 512u);
    CHECK(groups[0].bytes_per_sequence + groups[1].bytes_per_sequence == k.kv_cache_bytes);
}

TEST_CASE("an encoder has no KV cache and a decoder takes no encoder_context: errors name the field") {
    const auto bert = tally::load_hf_config_text(R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522})");
    CHECK(tally_test::error_field([&] { tally::kv_cache(bert, 128, 1, tally::DType::BF16, tally::DType::BF16); }) ==
          "model");
    CHECK(tally_test::error_message([&] {
              tally::kv_cache(bert, 128, 1, tally::DType::BF16, tally::DType::BF16);
          }).find("never decodes") != std::string::npos);
    CHECK(tally_test::error_field([] {
              tally::kv_cache(preset("llama-2-7b"), 128, 1, tally::DType::BF16, tally::DType::BF16, 64);
          }) == "encoder_context");
}

TEST_CASE("block-scaled KV caches: Llama-2-7B per token is 270,336 bytes in MXFP8 and 147,456 in NVFP4") {
    // 2·32·32·128 = 262,144 values a token; MXFP8 8.25 bits (OCP MX v1.0: E8M0 scale per 32), NVFP4 4.5 bits
    // (E4M3 scale per 16): 262,144 · 1.03125 = 270,336 and 262,144 · 0.5625 = 147,456 bytes.
    const auto c = preset("llama-2-7b");
    CHECK(tally::kv_cache(c, 1, 1, tally::DType::MXFP8, tally::DType::BF16).bytes_per_token == 270'336u);
    const auto k = tally::kv_cache(c, 4096, 2, tally::DType::NVFP4, tally::DType::NVFP4);
    CHECK(k.bytes_per_token == 147'456u);
    CHECK(k.kv_cache_bytes == 147'456ull * 4096 * 2);
    // NVFP4 weights: 6,738,415,616 parameters · 0.5625 bytes, rounded up to a whole byte.
    CHECK(k.weights_bytes == 3'790'358'784u);
}
