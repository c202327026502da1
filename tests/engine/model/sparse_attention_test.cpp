// DeepSeek Sparse Attention (model_type deepseek_v32: DeepSeek-V3.2-Exp, DeepSeek-V3.2): DeepSeek-V3's
// architecture plus a lightning indexer in every layer. Its parameters against the Hub's totals, its key cache
// against the reference's buffers, and top-k attention FLOPs against the dense count.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "accounting_helpers.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/memory/kvcache.h"
#include "tally/model/hf_config.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using tally_test::preset;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

json fixture(const std::string& name) { return tally_test::hf_fixture(name); }
tally::ModelConfig hf(const json& config) { return tally::load_hf_config(config); }

// One FLOPs term of a count, per sequence (0 when the count has none).
double term(const tally::FlopsResult& r, const char* id) {
    for (const auto& t : r.terms)
        if (std::string(t.id) == id) return t.forward_per_sequence;
    return 0;
}

// A causal decoder's count (a query sees itself and the keys before it).
tally::FlopsResult flops(const tally::ModelConfig& c, std::int64_t seq) {
    tally::FlopsInput in;
    in.seq = seq;
    in.attention = tally::AttentionFlops::Causal;
    return tally::count_flops(c, in);
}

// FP32 scales of one FP8 matrix stored in 128 x 128 blocks (config.json quantization_config weight_block_size).
u64 blocks(u64 rows, u64 cols) { return ((rows + 127) / 128) * ((cols + 127) / 128); }

}  // namespace

// References: the Hub's safetensors totals (huggingface.co/api/models/<repo>, safetensors.total, as recorded in public
// model tables): deepseek-ai/DeepSeek-V3.2 685,355,329,792 and deepseek-ai/DeepSeek-V3.2-Exp 685,396,921,376;
// deepseek-ai/DeepSeek-V3's F32 tensors 41,555,600 (its safetensors "parameters": {"F32": 41555600}). The totals
// count stored elements: the 62 layers (61 + the MTP layer), the MTP layer's own copies of embedding and head, and,
// for the Exp checkpoint, the FP32 weight_scale_inv of every FP8 matrix (one per 128 x 128 block). So the like-for-
// like comparison is tally's total + mtp + 2·V·h against V3.2's figure, and that plus the scales against Exp's.
TEST_CASE("deepseek_v32: the indexer's parameters bring DeepSeek-V3.2 to the Hub's 685,355,329,792 exactly") {
    const json j = fixture("deepseek-v3.2-exp");
    const auto c = hf(j);
    CHECK(c.index_topk == 2048);
    CHECK(c.index_n_heads == 64);
    CHECK(c.index_head_dim == 128);
    const auto p = count_params(c);
    // By hand from inference/model.py's Indexer: wq_b 1536 x 64·128, wk 7168 x 128, k_norm weight and bias 2·128,
    // weights_proj 7168 x 64.
    const u64 indexer = 1536u * 64 * 128 + 7168u * 128 + 2u * 128 + 7168u * 64;
    CHECK(indexer == 13'959'424u);
    CHECK(p.per_layer_attention == 187'107'328u + indexer);  // DeepSeek-V3's MLA (architectures_test) + indexer
    CHECK(p.total == 671'026'419'200u + 61 * indexer);       // DeepSeek-V3's total + 61 indexers
    const u64 copies = 2u * 129280 * 7168;                   // the MTP layer's embedding and head
    CHECK(p.total + p.mtp + copies == 685'355'329'792u);
    // The FP8 matrices' scales, by hand: MLA's q_a, q_b, kv_a, kv_b, o and the indexer's wq_b, wk in the 62 layers;
    // every dense (3 layers) and expert MLP matrix (257 experts in 59 MoE layers, the MTP's included). The
    // embedding, head, router, weights_proj and the MTP's eh_proj stay BF16.
    const u64 mla = blocks(1536, 7168) + blocks(128 * 192, 1536) + blocks(576, 7168) + blocks(128 * 256, 512) +
                    blocks(7168, 128 * 128);
    const u64 index_scales = blocks(64 * 128, 1536) + blocks(128, 7168);
    const u64 mlps = 3 * 3 * blocks(18432, 7168) + 59u * 257 * 3 * blocks(2048, 7168);
    // Without the indexer the same rule gives DeepSeek-V3's F32 figure (its scales + 59·256 router biases).
    CHECK(62 * mla + mlps + 59u * 256 == 41'555'600u);
    CHECK(p.total + p.mtp + copies + 62 * (mla + index_scales) + mlps == 685'396'921'376u);
    // The preset is the same model.
    const auto from_preset = count_params(preset("deepseek-v3-2-exp"));
    CHECK(from_preset.total == p.total);
    CHECK(from_preset.mtp == p.mtp);
    CHECK(from_preset.active == p.active);
}

TEST_CASE("deepseek_v32: the indexer's key cache is 132 bytes per token per layer on top of MLA's latent") {
    const auto c = preset("deepseek-v3-2-exp");
    // The reference's buffers per token: k_cache holds index_head_dim float8_e4m3fn values (1 byte), k_scale_cache
    // index_head_dim / 128 float32 (inference/model.py, Indexer.__init__): 128 + 4.
    const u64 indexer = 128u * 1 + (128u / 128) * 4;
    CHECK(tally::indexer_key_bytes(c) == indexer);
    const auto k = tally::kv_cache(c, 4096, 2, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.index_key_bytes_per_token == 61u * indexer);
    CHECK(k.bytes_per_token == 61u * (576u * 2 + indexer));  // MLA's 512 + 64 in bf16, the indexer's key in FP8
    CHECK(k.kv_cache_bytes == 61u * (576u * 2 + indexer) * 4096 * 2);
    // The FP8 key stays FP8 whatever the main cache's dtype.
    const auto fp8 = tally::kv_cache(c, 4096, 1, tally::DType::FP8, tally::DType::BF16);
    CHECK(fp8.bytes_per_token == 61u * (576u + indexer));
    // DeepSeek-V3 (no indexer) caches the latent only.
    CHECK(tally::kv_cache(preset("deepseek-v3"), 4096, 1, tally::DType::BF16, tally::DType::BF16).bytes_per_token ==
          61u * 576u * 2);
    // The per-kind split still adds up, and names the indexer's share.
    const auto groups = tally::kv_layer_groups(c, k, 4096, tally::DType::BF16);
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].index_key_bytes == indexer);
    CHECK(groups[0].bytes_per_layer_token == 576u * 2 + indexer);
    CHECK(groups[0].bytes_per_sequence == k.bytes_per_sequence(4096));
}

TEST_CASE("deepseek_v32: attention FLOPs beyond index_topk grow linearly in seq; the indexer's own grow as s²") {
    const auto c = preset("deepseek-v3-2-exp");
    const double a = 128, dqk = 192, dv = 128, L = 61, nI = 64, dI = 128, k = 2048;
    // Causal: a query at position i attends to min(i, k) keys: below k the dense triangle, beyond it k per query.
    for (const double s : {1024.0, 2048.0}) {
        const auto r = flops(c, static_cast<std::int64_t>(s));
        CHECK(term(r, "attn_scores") == 2 * (s * (s + 1) / 2) * a * dqk * L);
    }
    const auto at = [&](double s) { return flops(c, static_cast<std::int64_t>(s)); };
    const auto r8 = at(8192), r16 = at(16384), r32 = at(32768);
    const double core8 = term(r8, "attn_scores") + term(r8, "attn_values");
    const double core16 = term(r16, "attn_scores") + term(r16, "attn_values");
    const double core32 = term(r32, "attn_scores") + term(r32, "attn_values");
    // Linear: past k every token adds k entries per head per layer, so going from 16K to 32K adds twice what 8K to
    // 16K added (a quadratic count would add 4x).
    CHECK(core32 - core16 == Approx(2 * (core16 - core8)).epsilon(1e-12));
    CHECK(core16 - core8 == Approx(2 * 8192 * k * a * (dqk + dv) * L).epsilon(1e-12));
    // The indexer scores every visible key: s(s+1)/2 entries of n_I·(d_I + 1) multiply-adds, quadratic.
    CHECK(term(r16, "indexer") == 2 * (16384.0 * 16385 / 2) * nI * (dI + 1) * L);
    CHECK(term(r32, "indexer") > 3.9 * term(r16, "indexer"));
    // DeepSeek-V3's dense attention at 32K costs about 3x the sparse core plus the indexer.
    const auto dense = flops(preset("deepseek-v3"), 32768);
    const double dense_core = term(dense, "attn_scores") + term(dense, "attn_values");
    CHECK(dense_core > 2.5 * (core32 + term(r32, "indexer")));
    CHECK(term(dense, "indexer") == 0);
    // The indexer's projections are weights a token meets: the qkv term grows by them, 2 FLOPs each.
    CHECK(term(r8, "qkv") - term(flops(preset("deepseek-v3"), 8192), "qkv") ==
          2 * 8192 * L * (1536.0 * 64 * 128 + 7168.0 * 128 + 7168.0 * 64));
}

TEST_CASE("deepseek_v32: a bad indexer is refused naming the field") {
    json j = fixture("deepseek-v3.2-exp");
    for (const json bad : {json(0), json(-1), json(1.5)}) {
        j["index_topk"] = bad;
        CHECK(error_field([&] { hf(j); }) == "index_topk");
    }
    j = fixture("deepseek-v3.2-exp");
    j["index_head_dim"] = 32;  // narrower than the 64-wide RoPE part the indexer's heads hold
    CHECK(error_field([&] { hf(j); }) == "index_head_dim");
    j = fixture("deepseek-v3.2-exp");
    j["index_n_heads"] = 0;
    CHECK(error_field([&] { hf(j); }) == "index_n_heads");
    j = fixture("deepseek-v3.2-exp");
    j["q_lora_rank"] = nullptr;  // the indexer's queries come from the Q latent
    CHECK(error_field([&] { hf(j); }) == "q_lora_rank");
    // The keys belong to deepseek_v32 only.
    json v3 = fixture("deepseek-v3");
    v3["index_topk"] = 2048;
    CHECK(error_field([&] { hf(v3); }) == "index_topk");
    // Absent keys take the reference's defaults (ModelArgs: 64 heads of 128, top 2048).
    j = fixture("deepseek-v3.2-exp");
    j.erase("index_n_heads");
    j.erase("index_head_dim");
    j.erase("index_topk");
    CHECK(hf(j) == hf(fixture("deepseek-v3.2-exp")));
    // Tally's own config object: the fields round-trip and are checked.
    json o = tally::model_to_json(preset("deepseek-v3-2-exp"));
    CHECK(tally::model_from_json(o) == preset("deepseek-v3-2-exp"));
    o["index_head_dim"] = 0;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "index_head_dim");
    o = tally::model_to_json(preset("deepseek-v3-2-exp"));
    o["index_topk"] = -5;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "index_topk");
    o = tally::model_to_json(preset("llama-3-8b"));
    o["index_topk"] = 2048;
    o["index_n_heads"] = 64;
    o["index_head_dim"] = 128;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "index_topk");  // no Q latent to index from
    o = tally::model_to_json(preset("deepseek-v3"));
    o["index_n_heads"] = 64;  // heads without a top-k
    CHECK(error_field([&] { tally::model_from_json(o); }) == "index_n_heads");
}
