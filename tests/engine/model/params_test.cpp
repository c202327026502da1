// Tests of engine/src/model/params.cpp: exact parameter counts against published totals.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using tally_test::preset;

TEST_CASE("GPT-2 small (tied) has exactly 124,439,808 parameters") {
    // Hugging Face openai-community/gpt2: sum(p.numel()) = 124,439,808 (the "124M" of nanoGPT).
    const auto p = count_params(preset("gpt2-small"));
    CHECK(p.total == 124'439'808u);
    CHECK(p.embedding == 50257u * 768u);
    CHECK(p.position_embedding == 1024u * 768u);
    CHECK(p.lm_head == 0u);
    CHECK(p.per_layer == 7'087'872u);  // 4h²+4h (attn) + 8h²+5h (mlp) + 4h (2 LayerNorms), h = 768
}

TEST_CASE("Llama-2-7B has exactly 6,738,415,616 parameters") {
    // Hugging Face meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters (untied, SwiGLU, RMSNorm).
    const auto p = count_params(preset("llama-2-7b"));
    CHECK(p.total == 6'738'415'616u);
    CHECK(p.lm_head == 32000u * 4096u);
    CHECK(p.per_layer_attention == 4u * 4096u * 4096u);
    CHECK(p.per_layer_mlp == 3u * 4096u * 11008u);
    CHECK(p.per_layer_norms == 2u * 4096u);
}

TEST_CASE("GPT-2 medium, large and XL match their Hugging Face parameter counts") {
    // numel sums of openai-community/gpt2-medium, gpt2-large, gpt2-xl (all tied).
    CHECK(count_params(preset("gpt2-medium")).total == 354'823'168u);
    CHECK(count_params(preset("gpt2-large")).total == 774'030'080u);
    CHECK(count_params(preset("gpt2-xl")).total == 1'557'611'200u);
}

TEST_CASE("GQA models match their published counts: Llama-2-70B, Llama-3 8B/70B/405B, Mistral 7B") {
    // Hugging Face numel sums: Llama-2-70b-hf 68,976,648,192; Meta-Llama-3-8B 8,030,261,248;
    // Meta-Llama-3-70B 70,553,706,496; Llama-3.1-405B 405,853,388,800 (model card: 405B);
    // Mistral-7B-v0.1 7,241,732,096.
    CHECK(count_params(preset("llama-2-70b")).total == 68'976'648'192u);
    CHECK(count_params(preset("llama-3-8b")).total == 8'030'261'248u);
    CHECK(count_params(preset("llama-3-70b")).total == 70'553'706'496u);
    CHECK(count_params(preset("llama-3-405b")).total == 405'853'388'800u);
    CHECK(count_params(preset("mistral-7b")).total == 7'241'732'096u);
}

TEST_CASE("GPT-3 175B counts to 174.6B, the paper's 175.0B rounded") {
    // Brown et al. 2020, Table 2.1 lists 175.0B; 12·L·h² alone is 173.9B.
    const auto p = count_params(preset("gpt3-175b"));
    CHECK(p.total == 174'604'259'328u);
    CHECK(p.total > 12ull * 96 * 12288 * 12288);
}

TEST_CASE("Mixtral 8x7B has 46.7B parameters of which 12.9B are active per token") {
    // Jiang et al. 2024, "Mixtral of Experts", sec. 2: 47B total, 13B active (top-2 of 8 experts).
    const auto p = count_params(preset("mixtral-8x7b"));
    CHECK(p.total == 46'702'792'704u);
    CHECK(p.active == 12'879'925'248u);
    // The router is h × E per layer and always active.
    CHECK(p.per_layer_mlp == 8u * 3u * 4096u * 14336u + 8u * 4096u);
}

TEST_CASE("untying GPT-2 small's LM head adds exactly V·h parameters") {
    auto c = preset("gpt2-small");
    c.tied_embeddings = false;
    CHECK(count_params(c).total == 124'439'808u + 50257u * 768u);
}

TEST_CASE("components sum to the total for every model preset") {
    for (const auto& m : tally::presets_json().at("models")) {
        INFO(m.at("id").get<std::string>());
        const auto p = count_params(preset(m.at("id").get<std::string>()));
        // A hybrid preset's Mamba and linear-attention mixers are components of their own.
        CHECK(p.embedding + p.position_embedding + p.attention + p.mlp + p.norms + p.final_norm + p.lm_head + p.mamba +
                  p.linear_attention ==
              p.total);
        CHECK(p.mamba + p.linear_attention < p.total);
    }
}

TEST_CASE("Llama-2-70B's K and V projections are each 1/8 the size of Q (8 KV heads for 64 query heads)") {
    const auto tensors = tally::model_tensors(preset("llama-2-70b"));
    std::uint64_t q = 0, k = 0, v = 0;
    for (const auto& t : tensors) {
        if (t.name == "layers.*.attn.q.weight") q = t.count();
        if (t.name == "layers.*.attn.k.weight") k = t.count();
        if (t.name == "layers.*.attn.v.weight") v = t.count();
    }
    CHECK(q == 8192u * 8192u);
    CHECK(k * 8 == q);
    CHECK(v * 8 == q);
}

TEST_CASE("GPT-3's FFN matrix of 49152×12288 fp32 values is 2,415,919,104 bytes (2304 MiB)") {
    // d_ff = 4 · d_model = 49152 (Brown et al. 2020, sec. 2.1); 4 bytes per fp32 value.
    for (const auto& t : tally::model_tensors(preset("gpt3-175b")))
        if (t.name == "layers.*.mlp.up.weight") {
            CHECK(t.rows == 49152);
            CHECK(t.cols == 12288);
            CHECK(t.count() * 4 == 2'415'919'104u);
            CHECK(t.count() * 4 == 2304ull * 1024 * 1024);
        }
}

TEST_CASE("tensor parallelism splits every matrix and replicates the norms") {
    const auto c = preset("llama-2-7b");
    const auto p = count_params(c);
    const std::uint64_t replicated = p.norms + p.final_norm;
    CHECK(tally::shard_params(c, {2, c.num_layers, true, true, false}) == (p.total - replicated) / 2 + replicated);
    CHECK(tally::shard_params(c, {1, c.num_layers, true, true, false}) == p.total);
}

TEST_CASE("parameter counts that overflow 64 bits are an error, not a wrap") {
    tally::ModelConfig c = preset("llama-2-7b");
    c.num_layers = tally::kMaxLayers;   // 1e5 layers
    c.hidden_size = tally::kMaxHidden;  // 1e7
    c.num_heads = 1;
    c.num_kv_heads = 1;
    c.head_dim = tally::kMaxHidden;
    c.ffn_hidden_size = tally::kMaxFfn;  // 3 · 1e7 · 1e8 · 1e5 = 3e20 > 2^64
    CHECK(error_field([&] { count_params(c); }) == "params");
}

TEST_CASE("with tp above the KV heads each GPU keeps a whole KV head (Llama-2-70B, 8 KV heads, tp 16)") {
    // Megatron-LM replicates KV heads when tp > n_kv rather than cutting a head in two.
    const auto c = preset("llama-2-70b");
    const std::uint64_t h = 8192, d = 128, f = 28672;
    const std::uint64_t per_layer = h * (64 / 16) * d + 2 * h * 1 * d + (64 / 16) * d * h + 3 * h * f / 16 + 2 * h;
    CHECK(tally::shard_params(c, {16, 1, false, false, false}) == per_layer);
}

TEST_CASE("component formulas follow the model's shape: SwiGLU MLP is L·3·h·f, a tied LM head counts 0") {
    CHECK(std::string(tally::component_formula(tally::Component::Mlp, preset("llama-2-7b"))) == "L·3·h·f");
    CHECK(std::string(tally::component_formula(tally::Component::LmHead, preset("gpt2-small"))) ==
          "0 (tied to the embedding)");
    CHECK(std::string(tally::component_formula(tally::Component::Norms, preset("gpt2-small"))) ==
          "L·2·2h (weight + bias)");
}

TEST_CASE("Parameter counts follow every change to a config, also alternating models (params.cpp's tensor memo)",
          "[params][plan]") {
    tally::ModelConfig a = preset("llama-3-8b");
    const tally::ModelConfig b = preset("mixtral-8x7b");
    const auto pa = count_params(a);
    const auto pb = count_params(b);
    CHECK(count_params(a).total == pa.total);  // alternating, each model keeps its own count
    CHECK(count_params(b).total == pb.total);
    CHECK(pa.total != pb.total);
    // The same object changed in place: one more layer adds exactly one layer's parameters.
    a.num_layers += 1;
    CHECK(count_params(a).total == pa.total + pa.per_layer);
    // 64 more vocabulary rows: the untied embedding and LM head grow by 64·h each, in the whole-model shard too.
    a.vocab_size += 64;
    const tally::ShardSpec whole{1, a.num_layers, true, true, false};
    CHECK(tally::shard_params_split(a, whole).total == pa.total + pa.per_layer + 2u * 64u * 4096u);
    a.vocab_size -= 64;
    a.num_layers -= 1;
    CHECK(tally::shard_params_split(a, {1, a.num_layers, true, true, false}).total == pa.total);
}
