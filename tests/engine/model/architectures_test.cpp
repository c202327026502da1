// Issue 23's architectures: multi-head latent attention, DeepSeek-style MoE (first-k dense, shared and
// fine-grained experts, router bias, MTP modules), sliding windows, attention sinks and QK-norm, against
// published counts and counts derived here by hand from the published shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "accounting_helpers.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/model/hf_config.h"
#include "tally/memory/kvcache.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using tally_test::preset;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

// The config.json fixtures under tests/fixtures/hf (accounting_helpers.h).
json fixture(const std::string& name) { return tally_test::hf_fixture(name); }

tally::ModelConfig hf(const std::string& name) { return tally::load_hf_config(fixture(name)); }

double billions(u64 n) { return std::round(static_cast<double>(n) / 1e7) / 100; }  // the cards' 2 decimals

}  // namespace

TEST_CASE("MLA + DeepSeek MoE: DeepSeek-V3 counts 671,026,419,200 parameters without its MTP module") {
    // By hand from config.json of deepseek-ai/DeepSeek-V3 (modeling_deepseek.py shapes): per layer MLA
    // q_a 7168·1536 + q_a_norm 1536 + q_b 1536·128·192 + kv_a 7168·(512+64) + kv_a_norm 512 + kv_b 512·128·(128+128)
    // + o 128·128·7168 = 187,107,328; 2 norms 14,336; dense MLP 3·7168·18432; MoE MLP (256 + 1)·3·7168·2048 +
    // gate 256·7168 + e_score_correction_bias 256. 3 dense + 58 MoE layers, embedding and head 129280·7168 each,
    // final norm 7168: 671,026,419,200, the paper's "671B total" (sec. 4.2) and the sum of the checkpoint's
    // tensors outside layer 61 (the MTP layer).
    const auto c = preset("deepseek-v3");
    const auto p = count_params(c);
    CHECK(p.per_layer_attention == 187'107'328u);
    CHECK(p.per_dense_layer_mlp == 3u * 7168u * 18432u);
    CHECK(p.per_layer_mlp == 257ull * 3u * 7168u * 2048u + 256u * 7168u + 256u);
    CHECK(p.total == 671'026'419'200u);
    // Active: dense layers whole; MoE layers 8 routed + 1 shared expert and the router: 37.55B ("37B activated").
    CHECK(p.active == 37'552'297'472u);
    CHECK(billions(p.active) == Approx(37.55));
    // MTP module (sec. 2.2): one MoE layer + eh_proj 7168·14336 + enorm, hnorm, final norm; embedding and head
    // shared. 11.6B own; with the checkpoint's copies of embedding and head 13.46B, the paper's "14B".
    CHECK(p.mtp == 11'507'286'272u + 7168u * 14336u + 3u * 7168u);
    CHECK(billions(p.mtp + 2u * 129280u * 7168u) == Approx(13.46));
    // The Hugging Face config.json gives the same model.
    const auto from_hf = count_params(hf("deepseek-v3"));
    CHECK(from_hf.total == p.total);
    CHECK(from_hf.active == p.active);
    CHECK(from_hf.mtp == p.mtp);
}

TEST_CASE("MLA: DeepSeek-V3's KV cache holds the 576-wide latent per layer, 71x less than MHA would") {
    const auto c = preset("deepseek-v3");
    // DeepSeek-V2 sec. 2.1.2: (d_c + d_h^R)·l elements per token = (512 + 64)·61; bf16: 2 bytes each.
    const auto k = tally::kv_cache(c, 4096, 1, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.bytes_per_token == 61u * 576u * 2u);
    CHECK(k.kv_cache_bytes == 61u * 576u * 2u * 4096u);
    // Without the latent every head caches its K (128 + 64) and V (128): 128·320 values per layer.
    CHECK(k.mha_kv_cache_bytes == 61ull * 128u * 320u * 2u * 4096u);
    CHECK(k.mha_kv_cache_bytes / k.kv_cache_bytes == 71u);
}

TEST_CASE("MLA + MoE FLOPs: every matmul weight a token meets does 2 FLOPs, plus attention over Q/K and V widths") {
    const auto c = preset("deepseek-v3");
    const auto p = count_params(c);
    const std::int64_t s = 4096;
    tally::FlopsInput in;
    in.seq = s;
    const auto r = tally::count_flops(c, in);
    double scores = 0, values = 0, mlp = 0;
    for (const auto& t : r.terms) {
        if (std::string(t.id) == "attn_scores") scores = t.forward_per_sequence;
        if (std::string(t.id) == "attn_values") values = t.forward_per_sequence;
        if (std::string(t.id) == "mlp") mlp = t.forward_per_sequence;
    }
    // Independently: the active weights that are matrices (not the embedding lookup, norms or router bias).
    const u64 vectors = 61u * (2u * 7168u + 1536u + 512u) + 7168u + 58u * 256u;
    const u64 matmul_weights = p.active - 129280u * 7168u - vectors;
    CHECK(r.forward_per_token - (scores + values) / s == Approx(2.0 * matmul_weights).epsilon(1e-15));
    // Q·Kᵀ over d_qk = 192, attention·V over d_v = 128: full s×s per head per layer (the default convention).
    CHECK(scores == 2.0 * s * s * 128 * 192 * 61);
    CHECK(values == 2.0 * s * s * 128 * 128 * 61);
    CHECK(mlp == 2.0 * s * 7168 * 3 * (2048.0 * 9 * 58 + 18432.0 * 3));
    // The MTP module's forward stays apart from the training count.
    CHECK(r.mtp_forward_per_token > 0);
    CHECK(r.six_n_active == 6.0 * static_cast<double>(p.active));
}

TEST_CASE("Sinks, biases and router bias: gpt-oss-120b matches its model card's component table") {
    // OpenAI 2025, gpt-oss model card Table 1 (120b): MLP 114.71B, attention 0.96B, embed + unembed 1.16B,
    // active 5.13B, total 116.83B. By hand: experts 128·(2880·5760 + 5760 + 2880·2880 + 2880) + router
    // 128·2880 + 128 per layer; attention q, k, v, o with biases + 64 sinks per layer; 36 layers.
    const auto p = count_params(preset("gpt-oss-120b"));
    CHECK(p.mlp == 36ull * (128ull * 24'891'840u + 368'768u));
    CHECK(p.attention == 36u * 26'550'144u);
    CHECK(billions(p.mlp) == Approx(114.71));
    CHECK(billions(p.attention) == Approx(0.96));
    CHECK(billions(p.embedding + p.lm_head) == Approx(1.16));
    CHECK(billions(p.total) == Approx(116.83));
    CHECK(p.total == 116'829'156'672u);
    // The card's active count leaves out the embedding table (a lookup) and keeps the unembedding.
    CHECK(billions(p.active - p.embedding) == Approx(5.13));
    CHECK(count_params(hf("gpt-oss-120b")).total == p.total);
}

TEST_CASE("Sliding window: the KV cache of windowed layers stops at W tokens") {
    const auto c = preset("gpt-oss-120b");     // 18 of 36 layers windowed at 128 tokens
    const u64 per_layer = 2u * 8u * 64u * 2u;  // K and V, 8 KV heads of 64, bf16
    const auto short_context = tally::kv_cache(c, 100, 1, tally::DType::BF16, tally::DType::BF16);
    CHECK(short_context.kv_cache_bytes == 36u * per_layer * 100u);  // below the window every layer grows
    const auto long_context = tally::kv_cache(c, 131072, 2, tally::DType::BF16, tally::DType::BF16);
    CHECK(long_context.kv_cache_bytes == 2u * (18u * per_layer * 131072u + 18u * per_layer * 128u));
    CHECK(long_context.mha_kv_cache_bytes == 8u * long_context.kv_cache_bytes);  // 64 heads instead of 8
    // Capacity past the window: what is left after W tokens of every layer grows only the global layers.
    const u64 usable = long_context.weights_bytes + 10'000'000'000u;
    const auto fit = tally::kv_capacity(long_context, 131072, 2, usable);
    const u64 room = 10'000'000'000u - 2u * 36u * per_layer * 128u;
    CHECK(fit.max_context == 128u + room / (2u * 18u * per_layer));
    const auto one_more =
        tally::kv_cache(c, static_cast<std::int64_t>(fit.max_context) + 1, 2, tally::DType::BF16, tally::DType::BF16);
    CHECK(one_more.total_bytes > usable);  // the next token would not fit
    const auto at_max =
        tally::kv_cache(c, static_cast<std::int64_t>(fit.max_context), 2, tally::DType::BF16, tally::DType::BF16);
    CHECK(at_max.total_bytes <= usable);
}

TEST_CASE("Sliding window: attention FLOPs of windowed layers run over the window") {
    const auto c = preset("gemma-2-9b");  // 21 of 42 layers windowed at 4096
    const std::int64_t s = 8192, W = 4096;
    double band = 0;  // causal window entries by brute force: query i sees min(i, W) keys
    for (std::int64_t i = 1; i <= s; ++i) band += static_cast<double>(std::min(i, W));
    const double qd = 16.0 * 256;
    auto scores = [&](tally::AttentionFlops mode) {
        tally::FlopsInput in;
        in.seq = s;
        in.attention = mode;
        for (const auto& t : tally::count_flops(c, in).terms)
            if (std::string(t.id) == "attn_scores") return t.forward_per_sequence;
        return 0.0;
    };
    CHECK(scores(tally::AttentionFlops::Causal) == 2 * qd * (21.0 * s * (s + 1) / 2 + 21.0 * band));
    CHECK(scores(tally::AttentionFlops::Full) == 2 * qd * (21.0 * s * s + 21.0 * s * W));
    // Within the window a windowed layer is an ordinary one.
    tally::ModelConfig global = c;
    global.sliding_window = 0;
    global.num_sliding_layers = 0;
    tally::FlopsInput in;
    in.seq = 4096;
    CHECK(tally::count_flops(c, in).forward_per_token == tally::count_flops(global, in).forward_per_token);
}

TEST_CASE("Gemma 2/3 (sandwich norms, GeGLU, QK-norm) from config.json match the published totals") {
    // google/gemma-2-9b: 9,241,705,984 parameters; google/gemma-3-1b-pt: 999,885,952 (Hugging Face safetensors).
    const auto g2 = hf("gemma2-9b");
    CHECK(g2.num_sliding_layers == 21);  // the even layers (modeling_gemma2.py)
    CHECK(g2.sliding_window == 4096);
    CHECK(count_params(g2).total == 9'241'705'984u);
    CHECK(count_params(g2).total == count_params(preset("gemma-2-9b")).total);
    const auto g3 = hf("gemma3-1b");
    CHECK(g3.qk_norm);
    CHECK(g3.num_sliding_layers == 22);  // every 6th of 26 layers is global: 5, 11, 17, 23
    CHECK(count_params(g3).total == 999'885'952u);
    // Gemma 3 KV cache at 32k: 4 global layers grow, 22 stop at 512 (1 KV head of 256, K and V, bf16).
    const auto k = tally::kv_cache(g3, 32768, 1, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.kv_cache_bytes == 2u * 256u * 2u * (4u * 32768u + 22u * 512u));
}

TEST_CASE("QK-norm: Qwen3 and Qwen3-MoE from config.json") {
    // Qwen3-8B by hand: untied 151936·4096 twice; per layer q, o 4096·4096, k, v 4096·1024, q_norm, k_norm 128
    // each, MLP 3·4096·12288, 2 norms; 36 layers: 8,190,735,360 (the model card's "8.2B").
    const auto q8 = hf("qwen3-8b");
    CHECK(q8.qk_norm);
    CHECK(count_params(q8).per_layer_attention == 2u * 4096u * 4096u + 2u * 4096u * 1024u + 2u * 128u);
    CHECK(count_params(q8).total == 8'190'735'360u);
    // Qwen3-30B-A3B: 128 experts of 768, top-8, no shared expert: "30.5B total, 3.3B activated" (model card).
    const auto moe = count_params(hf("qwen3-30b-a3b"));
    CHECK(moe.total == 30'532'122'624u);
    CHECK(billions(moe.total) == Approx(30.53));
    CHECK(billions(moe.active) == Approx(3.35));
}

TEST_CASE("kimi_k2 loads as DeepSeek-V3's architecture: about 1.03T total, 32.9B active") {
    // Kimi K2 model card: 1T total, 32B activated; 384 experts, 64 heads, 1 dense layer.
    const auto c = hf("kimi-k2");
    CHECK(c.num_dense_layers == 1);
    CHECK(c.mtp_modules == 0);
    const auto p = count_params(c);
    CHECK(billions(p.total) == Approx(1026.41));
    CHECK(billions(p.active) == Approx(32.86));
}

TEST_CASE("Mistral's sliding_window comes from config.json (4096 in v0.1, null from v0.2)") {
    auto j = fixture("mistral-7b-v0.1");
    const auto v01 = tally::load_hf_config(j);
    CHECK(v01.sliding_window == 4096);
    CHECK(v01.num_sliding_layers == 32);
    CHECK(count_params(v01).total == 7'241'732'096u);
    j["sliding_window"] = nullptr;
    CHECK(tally::load_hf_config(j).sliding_window == 0);
}

TEST_CASE("Configs tally does not understand are refused naming the field") {
    auto ds = fixture("deepseek-v3");
    ds["moe_layer_freq"] = 2;
    CHECK(error_field([&] { tally::load_hf_config(ds); }) == "moe_layer_freq");
    ds = fixture("deepseek-v3");
    ds["shared_expert_intermediate_size"] = 4096;
    CHECK(error_field([&] { tally::load_hf_config(ds); }) == "shared_expert_intermediate_size");
    auto q = fixture("qwen3-30b-a3b");
    q["mlp_only_layers"] = json::array({0, 1});
    CHECK(error_field([&] { tally::load_hf_config(q); }) == "mlp_only_layers");
    auto oss = fixture("gpt-oss-120b");
    oss["layer_types"][0] = "chunked_attention";
    CHECK(error_field([&] { tally::load_hf_config(oss); }) == "layer_types");
    CHECK(error_field([&] { tally::load_hf_config(json{{"model_type", "gemma3"}}); }) == "text_config");
    // Tally's own config object checks the new fields' ranges.
    json o = tally::model_to_json(preset("deepseek-v3"));
    o["num_kv_heads"] = 8;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "num_kv_heads");
    o = tally::model_to_json(preset("deepseek-v3"));
    o["num_dense_layers"] = 61;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "num_dense_layers");
    o = tally::model_to_json(preset("gpt-oss-120b"));
    o["num_sliding_layers"] = 37;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "num_sliding_layers");
    o = tally::model_to_json(preset("llama-3-8b"));
    o["router_bias"] = true;
    CHECK(error_field([&] { tally::model_from_json(o); }) == "router_bias");
    // model_to_json round-trips every new field.
    for (const char* id : {"deepseek-v3", "gpt-oss-120b", "gemma-2-9b"}) {
        const auto c = preset(id);
        CHECK(tally::model_to_json(tally::model_from_json(tally::model_to_json(c))) == tally::model_to_json(c));
    }
}
