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

TEST_CASE("kv_layers: what one layer of each kind holds per token, and the kinds add up to the cache") {
    // DeepSeek-V3 (DeepSeek-V2 sec. 2.1.2): all 61 layers hold the 512-wide latent and the 64-wide RoPE key,
    // against 128 heads · (192 + 128) = 40,960 values of full K and V; bf16 = 2 bytes each.
    const json d = ok("inference", {{"model", "deepseek-v3"}, {"context", 131072}, {"hardware", "b200"}});
    REQUIRE(d["kv_layers"].size() == 1u);
    const json& latent = d["kv_layers"][0];
    CHECK(latent["kind"] == "full");
    CHECK(latent["latent"] == true);
    CHECK(latent["layers"] == 61);
    CHECK(latent["value_values"] == 512);
    CHECK(latent["key_values"] == 64);
    CHECK(latent["mha_values"] == 40'960);
    CHECK(latent["bytes_per_layer_token"] == 1152);
    CHECK(latent["bytes_per_token"] == 61 * 1152);
    CHECK(latent["tokens"] == 131072);
    CHECK(latent["bytes_per_sequence"] == d["kv_bytes_per_sequence"]);

    // gpt-oss-120b (model card sec. 2.1): 18 full and 18 windowed layers, each K and V of 8 heads of 64; at
    // 131,072 tokens the windowed layers hold 128: 18 · 2048 B · (131,072 + 128) = 4,836,556,800 bytes.
    const json g = ok("kv_cache", {{"model", "gpt-oss-120b"}, {"context", 131072}, {"batch", 2}});
    REQUIRE(g["kv_layers"].size() == 2u);
    const json& full = g["kv_layers"][0];
    const json& windowed = g["kv_layers"][1];
    CHECK(full["kind"] == "full");
    CHECK(windowed["kind"] == "windowed");
    CHECK(full["latent"] == false);
    CHECK(full["layers"] == 18);
    CHECK(windowed["layers"] == 18);
    CHECK(full["key_values"] == 512);
    CHECK(windowed["value_values"] == 512);
    CHECK(full["mha_values"] == 64 * 128);
    CHECK(full["bytes_per_layer_token"] == 2048);
    CHECK(full["tokens"] == 131072);
    CHECK(windowed["tokens"] == 128);
    CHECK(full["bytes_per_sequence"].get<std::uint64_t>() + windowed["bytes_per_sequence"].get<std::uint64_t>() ==
          4'836'556'800u);
    CHECK(g["kv_cache_bytes"] == 2 * 4'836'556'800u);
    // Below the window both kinds hold every token.
    const json s = ok("kv_cache", {{"model", "gpt-oss-120b"}, {"context", 100}});
    CHECK(s["kv_layers"][1]["tokens"] == 100);

    // NVFP4 (4.5 bits a value): one gpt-oss layer's 1,024 values are 576 bytes a token.
    const json f = ok("kv_cache", {{"model", "gpt-oss-120b"}, {"context", 4096}, {"kv_dtype", "nvfp4"}});
    CHECK(f["kv_layers"][0]["bytes_per_layer_token"] == 576);
    CHECK(f["kv_layers"][0]["bytes_per_sequence"].get<std::uint64_t>() +
              f["kv_layers"][1]["bytes_per_sequence"].get<std::uint64_t>() ==
          f["kv_cache_bytes"]);

    // Llama 3 8B: one kind, 32 full layers of K and V for 8 of 32 heads of 128.
    const json l = ok("kv_cache", {{"model", "llama-3-8b"}, {"context", 8192}});
    REQUIRE(l["kv_layers"].size() == 1u);
    CHECK(l["kv_layers"][0]["layers"] == 32);
    CHECK(l["kv_layers"][0]["key_values"] == 1024);
    CHECK(l["kv_layers"][0]["mha_values"] == 8192);
    CHECK(l["kv_layers"][0]["bytes_per_sequence"] == l["kv_cache_bytes"]);
}
