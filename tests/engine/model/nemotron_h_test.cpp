// Issue 36 item 2: model_type nemotron_h (Nemotron-H 8B / 47B / 56B, Nemotron Nano 9B / 12B v2). Each block is an
// RMSNorm and one module: a Mamba-2 mixer (M), GQA attention (*) or a non-gated MLP (-), as hybrid_override_pattern
// lists them (transformers modeling_nemotron_h.py @ 008d9e95, NemotronHBlock). The counts below are written module
// by module from that file, independently of tally's tensor list.
//
// Fixtures (tests/fixtures/hf/nemotron-*.json): the checkpoints' config.json keys, with the shapes Megatron-Bridge's
// NemotronH providers give per model (src/megatron/bridge/models/nemotronh/nemotron_h_provider.py @ 160ccccb:
// hybrid_layer_pattern, hidden_size, ffn_hidden_size, num_attention_heads, mamba_num_heads, mamba_head_dim,
// mamba_state_dim; 8 query groups and 8 Mamba groups by default) and NemotronHConfig's defaults for the rest.
#include <catch2/catch.hpp>

#include <cstdint>

#include "accounting_helpers.h"
#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/compute/flops.h"
#include "tally/memory/kvcache.h"
#include "tally/memory/memory.h"
#include "tally/model/hf_config.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

json fixture(const std::string& name) { return tally_test::hf_fixture(name); }
tally::ModelConfig hf(const json& j) { return tally::load_hf_config(j); }

const tally::FlopsTerm* term(const tally::FlopsResult& r, const std::string& id) {
    return tally_test::flops_term(r, id);
}

// One Nemotron-H model written out from modeling_nemotron_h.py: embeddings V x h; per Mamba-2 block the norm h,
// in_proj h -> d_inner + conv_dim + H, conv1d conv_dim x 4 + its bias, dt_bias, A_log, D per head, the gated
// RMSNorm over d_inner, out_proj d_inner -> h; per attention block the norm, q/o h x a·128, k/v h x 8·128; per MLP
// block the norm, up_proj and down_proj h x f; norm_f h; an untied lm_head V x h.
struct Shape {
    u64 h, f, heads, mamba_heads, mamba_head_dim, state, mamba_layers, attention_layers, mlp_layers;
};
u64 module_sum(const Shape& s) {
    const u64 V = 131072, di = s.mamba_heads * s.mamba_head_dim, conv = di + 2 * 8 * s.state;
    const u64 mamba = s.h + s.h * (di + conv + s.mamba_heads) + conv * 4 + conv + 3 * s.mamba_heads + di + di * s.h;
    const u64 attention = s.h + 2 * s.h * s.heads * 128 + 2 * s.h * 8 * 128;
    const u64 mlp = s.h + 2 * s.h * s.f;
    return 2 * V * s.h + s.mamba_layers * mamba + s.attention_layers * attention + s.mlp_layers * mlp + s.h;
}

}  // namespace

// Exact total: the Hub's safetensors metadata for nvidia/NVIDIA-Nemotron-Nano-9B-v2 gives 8,888,227,328
// parameters (the "exact params from HF safetensors" row of github:debaditc/kvfit scripts/build_registry.py
// @ bd4ccabf; a NIM speed harness of the same bf16 checkpoint records 17,776,454,656 bytes, twice that); the model
// card says 9B, 56 layers: 27 Mamba-2, 25 MLP, 4 attention.
TEST_CASE("Nemotron Nano 9B v2's config.json counts 8,888,227,328 parameters, the safetensors total") {
    const auto c = hf(fixture("nemotron-nano-9b-v2"));
    CHECK(c.num_layers == 56);
    CHECK(c.num_mamba_layers == 27);
    CHECK(c.num_mlp_layers == 25);
    CHECK(c.num_attention_layers() == 4);
    const auto p = count_params(c);
    CHECK(p.total == 8'888'227'328u);
    CHECK(p.total == module_sum({4480, 15680, 40, 128, 80, 128, 27, 4, 25}));
    CHECK(p.active == p.total);  // dense
    // The MLP sits in the 25 MLP blocks only, the Mamba-2 mixers in their 27: one norm per block.
    CHECK(p.mlp == u64{25} * 2 * 4480 * 15680);
    CHECK(p.norms == 56u * 4480);
    CHECK(p.attention == 4u * (2 * 4480 * 5120 + 2 * 4480 * 1024));
}

// The other checkpoints' cards give round figures only (8B, 47B, 56B, 12B); the exact check is the module sum,
// and the layer kinds are the cards' (8B: 24 Mamba-2, 24 MLP, 4 attention; 56B: 54, 54, 10; 47B: five attention
// layers).
TEST_CASE("Nemotron-H 8B, 47B, 56B and Nemotron Nano 12B v2 count module by module, near their cards' sizes") {
    struct Case {
        const char* fixture;
        Shape shape;
        u64 billions;  // the card's figure
    };
    const Case cases[] = {
        {"nemotron-h-8b-base-8k", {4096, 21504, 32, 128, 64, 128, 24, 4, 24}, 8},
        {"nemotron-h-47b-base-8k", {8192, 30720, 64, 256, 64, 256, 45, 5, 48}, 47},
        {"nemotron-h-56b-base-8k", {8192, 32768, 64, 256, 64, 256, 54, 10, 54}, 56},
        {"nemotron-nano-12b-v2", {5120, 20480, 40, 128, 80, 128, 28, 6, 28}, 12},
    };
    for (const Case& k : cases) {
        INFO(k.fixture);
        const auto c = hf(fixture(k.fixture));
        CHECK(static_cast<u64>(c.num_mamba_layers) == k.shape.mamba_layers);
        CHECK(static_cast<u64>(c.num_attention_layers()) == k.shape.attention_layers);
        CHECK(static_cast<u64>(c.num_mlp_layers) == k.shape.mlp_layers);
        const u64 total = count_params(c).total;
        CHECK(total == module_sum(k.shape));
        CHECK((total + 500'000'000) / 1'000'000'000 == k.billions);
    }
    CHECK(count_params(hf(fixture("nemotron-h-8b-base-8k"))).total == 8'100'852'736u);
}

TEST_CASE("a hybrid_override_pattern of the wrong length, an unknown letter or a MoE block is refused naming it") {
    const json j = fixture("nemotron-h-8b-base-8k");
    json short_pattern = j;
    short_pattern["hybrid_override_pattern"] = j["hybrid_override_pattern"].get<std::string>().substr(1);
    CHECK(error_field([&] { hf(short_pattern); }) == "hybrid_override_pattern");
    json letter = j;
    std::string p = j["hybrid_override_pattern"].get<std::string>();
    p[3] = 'X';
    letter["hybrid_override_pattern"] = p;
    CHECK(error_field([&] { hf(letter); }) == "hybrid_override_pattern");
    json moe = j;
    p[3] = 'E';  // Nemotron 3's MoE blocks are not modelled yet
    moe["hybrid_override_pattern"] = p;
    CHECK(error_field([&] { hf(moe); }) == "hybrid_override_pattern");
    json missing = j;
    missing.erase("hybrid_override_pattern");
    CHECK(error_field([&] { hf(missing); }) == "hybrid_override_pattern");
    // transformers 5's layers_block_type list, legacy or new names, counts the same; a wrong entry names it.
    json listed = j;
    listed.erase("hybrid_override_pattern");
    listed["layers_block_type"] = json::array();
    for (char k : j["hybrid_override_pattern"].get<std::string>())
        listed["layers_block_type"].push_back(k == 'M' ? "mamba" : k == '*' ? "full_attention" : "mlp");
    CHECK(count_params(hf(listed)).total == count_params(hf(j)).total);
    listed["layers_block_type"][0] = "conv";
    CHECK(error_field([&] { hf(listed); }) == "layers_block_type");
    // Keys that would change the count in a way tally does not model.
    json bias = j;
    bias["attention_bias"] = true;
    CHECK(error_field([&] { hf(bias); }) == "attention_bias");
    json tied = j;
    tied["tie_word_embeddings"] = true;
    CHECK(error_field([&] { hf(tied); }) == "tie_word_embeddings");
    json groups = j;
    groups["n_groups"] = 3;  // does not divide 128 heads
    CHECK(error_field([&] { hf(groups); }) == "n_groups");
    json unknown = j;
    unknown["mamba_d_ssm"] = 8192;
    CHECK(error_field([&] { hf(unknown); }) == "mamba_d_ssm");
    // use_bias puts biases on in_proj and out_proj: (d_inner + conv_dim + H) + h more per Mamba-2 block.
    json biased = j;
    biased["use_bias"] = true;
    CHECK(count_params(hf(biased)).total - count_params(hf(j)).total == 24u * ((8192 + 10240 + 128) + 4096));
}

TEST_CASE("single-module blocks: the tally config object round-trips and is checked") {
    const auto c = hf(fixture("nemotron-nano-9b-v2"));
    json o = tally::model_to_json(c);
    CHECK(o["num_mlp_layers"] == 25);
    CHECK(o["mixer_blocks_without_mlp"] == true);
    CHECK(count_params(tally::model_from_json(o)).total == count_params(c).total);
    json over = o;
    over["num_mlp_layers"] = 30;  // 27 Mamba-2 + 30 > 56 layers
    CHECK(error_field([&] { tally::model_from_json(over); }) == "num_mamba_layers");
    json moe = o;
    moe["num_experts"] = 8;
    moe["experts_per_token"] = 2;
    CHECK(error_field([&] { tally::model_from_json(moe); }) == "num_mlp_layers");
    // Without the flag every mixer block would keep an MLP too: 31 more MLPs and their norms.
    json with_mlp = o;
    with_mlp.erase("mixer_blocks_without_mlp");
    CHECK(count_params(tally::model_from_json(with_mlp)).total - count_params(c).total ==
          u64{31} * (2 * 4480 * 15680 + 4480));
}

TEST_CASE("Nemotron-H FLOPs: the MLP in the MLP blocks only, attention in 4 layers, Mamba-2 in 27") {
    const auto c = hf(fixture("nemotron-nano-9b-v2"));
    tally::FlopsInput in;
    in.seq = 4096;
    in.attention = tally::AttentionFlops::Causal;
    const auto r = tally::count_flops(c, in);
    const double s = 4096, h = 4480;
    REQUIRE(term(r, "mlp") != nullptr);
    CHECK(term(r, "mlp")->forward_per_sequence == 2 * s * h * 15680 * 2 * 25);
    CHECK(term(r, "qkv")->forward_per_sequence == 2 * s * h * (5120 + 2 * 1024) * 4);
    const double di = 10240, conv = 10240 + 2 * 8 * 128;
    const double mamba_token = 2 * h * (di + conv + 128) + 2 * conv * 4 + 4 * di * 128 + 2 * di * h;
    REQUIRE(term(r, "mamba") != nullptr);
    CHECK(term(r, "mamba")->forward_per_sequence == s * mamba_token * 27);
}

TEST_CASE("Nemotron-H inference state: K and V in the 4 attention layers, a fixed Mamba-2 state in 27, none in MLPs") {
    const auto c = hf(fixture("nemotron-nano-9b-v2"));
    const auto k = tally::kv_cache(c, 131072, 1, tally::DType::BF16, tally::DType::BF16);
    CHECK(k.bytes_per_token == 4u * 2 * 8 * 128 * 2);
    // (d_inner + 2·G·N)·(k − 1) + H·P·N per Mamba-2 layer, bf16.
    CHECK(k.state_bytes_per_sequence == 27u * ((10240 + 2048) * 3 + 128u * 80 * 128) * 2);
}

TEST_CASE("Nemotron-H activations: an MLP block saves the MLP's tensors, a mixer block the mixer block's") {
    const auto c = hf(fixture("nemotron-nano-9b-v2"));
    tally::TrainingSetup st;
    st.seq = 4096;
    const auto a = tally::activation_memory(c, st, c.num_layers, 1, true, true);
    // Same setup, every block holding both (the flag off, the MLP-only blocks made attention blocks): per layer,
    // the MLP terms scale by the 25 MLP blocks of 56, the mixer block's by its 31.
    auto both = c;
    both.mixer_blocks_without_mlp = false;
    both.num_mlp_layers = 0;
    const auto b = tally::activation_memory(both, st, both.num_layers, 1, true, true);
    u64 checked = 0;
    for (const auto& x : a.terms) {
        for (const auto& y : b.terms) {
            if (std::string(x.id) != y.id || !x.per_layer) continue;
            const bool mlp = std::string(x.id).rfind("mlp_", 0) == 0;
            CHECK(x.bytes == (y.bytes * (mlp ? 25 : 31) + 55) / 56);
            ++checked;
        }
    }
    CHECK(checked >= 6);
    CHECK(a.per_layer_bytes < b.per_layer_bytes);
}

// NVIDIA's config.json files, saved by Python's json module, spell time_step_limit (0.0, inf) as [0.0, Infinity],
// which JSON has not: the text loads as pasted, and the literal inside a string or beside a counted key is no number.
TEST_CASE("a config.json with Python's Infinity literal loads as pasted; counted keys stay checked") {
    std::string text = fixture("nemotron-nano-9b-v2").dump();
    const std::string key = "\"use_cache\":true";
    REQUIRE(text.find(key) != std::string::npos);
    text.replace(text.find(key), key.size(), key + ",\"time_step_limit\":[0.0,Infinity],\"_note\":\"-Infinity\"");
    CHECK(error_field([&] { tally::load_hf_config_text(text); }) == "_note");  // the string survives as a string
    const std::string note = ",\"_note\":\"-Infinity\"";
    text.erase(text.find(note), note.size());
    CHECK(count_params(tally::load_hf_config_text(text)).total == 8'888'227'328u);
    CHECK(tally::python_json_infinities("[Infinity,-Infinity,\"Infinity\"]") == "[1e308   ,-1e308   ,\"Infinity\"]");
    std::string counted = text;
    const std::string heads = "\"num_attention_heads\":40";
    REQUIRE(counted.find(heads) != std::string::npos);
    counted.replace(counted.find(heads), heads.size(), "\"num_attention_heads\":Infinity");
    CHECK(error_field([&] { tally::load_hf_config_text(counted); }) == "num_attention_heads");
}
