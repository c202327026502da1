// Issue 36 item 2: model_type kimi_linear (Moonshot's Kimi Linear, arXiv:2510.26692). Layer i (1-based) is Kimi
// Delta Attention when linear_attn_config.kda_layers lists it and MLA when full_attn_layers does; the first
// first_k_dense_replace layers have a dense MLP, the rest a MoE with a shared expert (vLLM's port:
// vllm-project/vllm@01d99586 vllm/model_executor/models/kimi_linear.py, KimiDecoderLayer / KimiMoE / KimiMLAAttention;
// the KDA layer in vllm/model_executor/layers/kda.py @01a7e5d9). The counts below are written module by module from
// those files, independently of tally's tensor list.
//
// Fixture tests/fixtures/hf/kimi-linear-48b-a3b-instruct.json: moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json as
// a checkpoint report prints it verbatim (with its 20,493-tensor list); the safetensors metadata total is
// 49,122,681,728 parameters (the Hub API's safetensors.total and that report agree).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "accounting_helpers.h"
#include "tally/compute/flops.h"
#include "tally/memory/kvcache.h"
#include "tally/model/hf_config.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

json fixture() { return tally_test::hf_fixture("kimi-linear-48b-a3b-instruct"); }
tally::ModelConfig hf(const json& j) { return tally::load_hf_config(j); }

// Kimi-Linear-48B-A3B: h 2304, 27 layers, vocab 163,840; KDA 32 heads of 128, conv 4; MLA 32 heads, kv_lora_rank 512,
// no q_lora, nope 128 + rope 64, v 128; 256 experts of 1024 (top 8) + 1 shared, dense MLP 9216 in layer 1.
constexpr u64 V = 163840, h = 2304, HD = 32 * 128, d = 128, E = 256;
// KimiDeltaAttention: q/k/v_proj h -> H·d; q/k/v_conv1d H·d x 4 (no bias); A_log H; f_a h -> d, f_b d -> H·d;
// dt_bias H·d; b_proj h -> H; g_a h -> d, g_b d -> H·d; o_norm d; o_proj H·d -> h.
constexpr u64 kKda = 3 * h * HD + 3 * HD * 4 + 32 + h * d + d * HD + HD + h * 32 + h * d + d * HD + d + HD * h;
// KimiMLAAttention: q_proj h -> 32·192; kv_a_proj_with_mqa h -> 512 + 64; kv_a_layernorm 512; kv_b_proj 512 ->
// 32·(128 + 128); o_proj 32·128 -> h.
constexpr u64 kMla = h * 32 * 192 + h * 576 + 512 + 512 * 32 * 256 + 32 * 128 * h;
constexpr u64 kExpert = 3 * h * 1024;
constexpr u64 kMoe = E * kExpert + kExpert + E * h + E;  // experts, shared expert, gate and e_score_correction_bias
constexpr u64 kTotal = 2 * V * h + 20 * kKda + 7 * kMla + 3 * h * 9216 + 26 * kMoe + 27 * 2 * h + h;

}  // namespace

TEST_CASE("Kimi-Linear-48B-A3B's config.json counts 49,122,681,728 parameters, its safetensors total") {
    const auto c = hf(fixture());
    CHECK(c.linear_kind == tally::LinearKind::Kda);
    CHECK(c.num_linear_layers == 20);
    CHECK(c.num_attention_layers() == 7);
    CHECK(c.is_mla());
    CHECK(c.num_dense_layers == 1);
    const auto p = count_params(c);
    CHECK(kTotal == 49'122'681'728u);
    CHECK(p.total == kTotal);
    CHECK(p.per_linear_layer == kKda);
    CHECK(p.linear_attention == 20 * kKda);
    CHECK(p.attention == 7 * kMla);
    // Active: 8 of the 256 routed experts in each of the 26 MoE layers (the card's 3B activated).
    CHECK(p.active == kTotal - 26 * 248 * kExpert);
    CHECK(p.active == 3'484'459'904u);
}

TEST_CASE("Kimi Linear: the layer lists decide the kinds, and wrong lists or keys are refused naming the field") {
    const json j = fixture();
    // Moving layer 27 from MLA to KDA: one MLA fewer, one KDA more.
    json moved = j;
    moved["linear_attn_config"]["full_attn_layers"] = json::array({4, 8, 12, 16, 20, 24});
    moved["linear_attn_config"]["kda_layers"].push_back(27);
    CHECK(count_params(hf(moved)).total == kTotal + kKda - kMla);
    json short_list = j;
    short_list["linear_attn_config"]["kda_layers"].erase(0);  // layer 1 in neither list
    CHECK(error_field([&] { hf(short_list); }) == "linear_attn_config.kda_layers");
    json twice = j;
    twice["linear_attn_config"]["full_attn_layers"].push_back(1);  // layer 1 in both
    CHECK(error_field([&] { hf(twice); }) == "linear_attn_config.full_attn_layers");
    json outside = j;
    outside["linear_attn_config"]["full_attn_layers"][6] = 28;  // past num_hidden_layers (27), 1-based
    CHECK(error_field([&] { hf(outside); }) == "linear_attn_config.full_attn_layers");
    json zero = j;
    zero["linear_attn_config"]["kda_layers"][0] = 0;  // layers are 1-based
    CHECK(error_field([&] { hf(zero); }) == "linear_attn_config.kda_layers");
    json kind = j;
    kind["linear_attn_config"]["swa_layers"] = json::array();  // a layer kind tally does not know
    CHECK(error_field([&] { hf(kind); }) == "linear_attn_config.swa_layers");
    json heads = j;
    heads["linear_attn_config"].erase("num_heads");
    CHECK(error_field([&] { hf(heads); }) == "linear_attn_config.num_heads");
    json freq = j;
    freq["moe_layer_freq"] = 2;
    CHECK(error_field([&] { hf(freq); }) == "moe_layer_freq");
    json mtp = j;
    mtp["num_nextn_predict_layers"] = 1;
    CHECK(error_field([&] { hf(mtp); }) == "num_nextn_predict_layers");
    json unknown = j;
    unknown["kda_gate_rank"] = 64;
    CHECK(error_field([&] { hf(unknown); }) == "kda_gate_rank");
}

// The state per sequence, independently: vLLM's MambaStateShapeCalculator.kda_state_shape (vllm-project/vllm@02d71083
// vllm/model_executor/layers/mamba/mamba_utils.py) gives per KDA layer a conv state (H·d + 2·H·d, kernel − 1) and a
// recurrent state (H, d, d); vLLM keeps the latter in float32 (kda_state_dtype), tally in the weights' dtype. The 7
// MLA layers cache the 512-wide latent and the 64-wide RoPE key per token.
TEST_CASE("Kimi-Linear-48B inference: 20 KDA layers hold 22.4 MB per sequence, 7 MLA layers 8 KiB a token") {
    const auto c = hf(fixture());
    const auto k = tally::kv_cache(c, 131072, 1, tally::DType::BF16, tally::DType::BF16);
    const u64 conv = 3 * HD * (4 - 1), recurrent = 32 * d * d;
    CHECK(tally::linear_state_values(c) == conv + recurrent);
    CHECK(k.state_bytes_per_sequence == 20 * (conv + recurrent) * 2);
    CHECK(k.state_bytes_per_sequence == 22'446'080u);
    const u64 vllm_bytes = 20 * (conv * 2 + recurrent * 4);  // its float32 recurrent state: 43.4 MB
    CHECK(vllm_bytes - k.state_bytes_per_sequence == 20 * recurrent * 2);
    CHECK(k.bytes_per_token == 7u * (512 + 64) * 2);
    CHECK(k.kv_cache_bytes == 131072u * k.bytes_per_token + k.state_bytes_per_sequence);
    const auto groups = tally::kv_layer_groups(c, k, 131072, tally::DType::BF16, tally::DType::BF16);
    REQUIRE(groups.size() == 2);
    CHECK(std::string(groups[1].kind) == "linear_attention");
    CHECK(groups[1].layers == 20);
    CHECK(groups[0].bytes_per_sequence + groups[1].bytes_per_sequence == k.bytes_per_sequence(131072));
}

TEST_CASE("Kimi Linear FLOPs: KDA's projections, gates, convs and recurrence in 20 layers, MLA in 7") {
    const auto c = hf(fixture());
    tally::FlopsInput in;
    in.seq = 4096;
    in.attention = tally::AttentionFlops::Causal;
    const auto r = tally::count_flops(c, in);
    const double s = 4096, H = 2304;
    const double kda_token = 3 * 2 * H * 4096 + 2 * 2 * H * 128 + 2 * 2 * 128 * 4096 + 2 * H * 32 + 2 * 3 * 4096 * 4 +
                             3 * 2 * 32 * 128 * 128 + 2 * 4096 * H;
    REQUIRE(tally_test::flops_term(r, "linear_attention") != nullptr);
    CHECK(tally_test::flops_term(r, "linear_attention")->forward_per_sequence == s * kda_token * 20);
    const double mla = H * 32 * 192 + H * 576 + 512 * 32 * 256;
    CHECK(tally_test::flops_term(r, "qkv")->forward_per_sequence == 2 * s * mla * 7);
    CHECK(tally_test::flops_term(r, "mlp")->forward_per_sequence == 2 * s * H * 3 * (1024 * 9 * 26 + 9216));
}

TEST_CASE("KDA in the tally config object: round-trips, and linear_kind is checked") {
    const auto c = hf(fixture());
    const json o = tally::model_to_json(c);
    CHECK(o["linear_kind"] == "kda");
    CHECK(tally::model_from_json(o) == c);
    json gdn = o;
    gdn.erase("linear_kind");  // the same widths as gated DeltaNet: another tensor list, another count
    CHECK(count_params(tally::model_from_json(gdn)).total != kTotal);
    json bad = o;
    bad["linear_kind"] = "mamba";
    CHECK(error_field([&] { tally::model_from_json(bad); }) == "linear_kind");
    json heads = o;
    heads["linear_value_heads"] = 64;  // KDA's Q, K and V share one head count
    CHECK(error_field([&] { tally::model_from_json(heads); }) == "linear_value_heads");
    json stray = tally::model_to_json(hf(tally_test::hf_fixture("falcon-h1-7b-instruct")));
    stray["linear_kind"] = "kda";  // no linear-attention layer
    CHECK(error_field([&] { tally::model_from_json(stray); }) == "linear_kind");
}

TEST_CASE("the kimi-linear-48b-a3b preset is Kimi-Linear-48B-A3B's config.json, counted the same") {
    auto c = tally_test::preset("kimi-linear-48b-a3b");
    auto imported = hf(fixture());
    c.name = imported.name;
    CHECK(c == imported);
    CHECK(count_params(c).total == kTotal);
}
