// Issue 36 item 2: model_type jamba (AI21's Jamba, Jamba 1.5 / 1.6 / 1.7). Layer i is GQA attention when
// i % attn_layer_period == attn_layer_offset, else a Mamba-1 mixer; its feed-forward is a MoE when
// i % expert_layer_period == expert_layer_offset, else one gated MLP (transformers configuration_jamba.py and
// modeling_jamba.py @ 008f5c8c, JambaConfig.layers_block_type / layers_num_experts, JambaMambaMixer). The counts below
// are written module by module from that file, independently of tally's tensor list.
//
// Fixture tests/fixtures/hf/jamba-1.5-mini.json: ai21labs/AI21-Jamba-1.5-Mini's config.json as onnx-diagnostic copies
// it; model.safetensors.index.json's total_size is 103,140,646,656 bytes, 51,570,323,328 bf16 parameters (the card:
// 52B total, 12B active).
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

json fixture() { return tally_test::hf_fixture("jamba-1.5-mini"); }
tally::ModelConfig hf(const json& j) { return tally::load_hf_config(j); }

// Jamba 1.5 Mini's shape: h 4096, 32 layers, 32 Q / 8 KV heads of 128, MLP 14336, 16 experts, vocab 65,536; Mamba-1
// with d_inner = 2 · 4096, dt_rank 256, d_state 16, d_conv 4, a conv bias and no projection biases.
constexpr u64 V = 65536, h = 4096, f = 14336, E = 16, di = 8192, R = 256, N = 16, K = 4;
// JambaMambaMixer: in_proj h -> 2 d_inner; conv1d d_inner x d_conv + bias; x_proj d_inner -> R + 2N; dt_proj R ->
// d_inner + bias; A_log d_inner x N; D d_inner; out_proj d_inner -> h; dt_layernorm R, b_layernorm and c_layernorm N.
constexpr u64 kMixer = h * 2 * di + di * K + di + di * (R + 2 * N) + R * di + di + di * N + di + di * h + R + 2 * N;
constexpr u64 kAttention = 2 * h * 4096 + 2 * h * 1024;  // q, o: h x 32·128; k, v: h x 8·128
constexpr u64 kMlp = 3 * h * f;                          // JambaMLP gate, up, down
constexpr u64 kMoe = E * kMlp + E * h;                   // JambaSparseMoeBlock: the experts and the router
// Layers 4, 12, 20, 28 attention (period 8, offset 4), the other 28 Mamba-1; odd layers MoE (period 2, offset 1).
constexpr u64 kTotal = 2 * V * h + 4 * kAttention + 28 * kMixer + 16 * kMlp + 16 * kMoe + 32 * 2 * h + h;

}  // namespace

TEST_CASE("Jamba 1.5 Mini's config.json counts 51,570,323,328 parameters, its safetensors total") {
    const auto c = hf(fixture());
    CHECK(c.is_mamba1());
    CHECK(c.num_mamba_layers == 28);
    CHECK(c.num_attention_layers() == 4);
    CHECK(c.mamba_d_inner() == 8192);
    CHECK(c.mamba_dt_rank == 256);
    CHECK(c.num_dense_layers == 16);  // the even layers' plain MLP
    const auto p = count_params(c);
    CHECK(kTotal == 51'570'323'328u);
    CHECK(p.total == kTotal);
    CHECK(p.per_mamba_layer == kMixer);
    CHECK(p.mamba == 28 * kMixer);
    CHECK(p.attention == 4 * kAttention);
    CHECK(p.mlp == 16 * kMlp + 16 * kMoe);
    // Active: two of the 16 experts in each MoE layer (the card's 12B active).
    CHECK(p.active == kTotal - 16 * 14 * kMlp);
    CHECK(p.active == 12'110'311'296u);
}

TEST_CASE("Jamba's fields: dt_rank auto, no MoE with num_experts 1, and the periods move layers between kinds") {
    const json j = fixture();
    json autorank = j;
    autorank["mamba_dt_rank"] = "auto";  // ceil(4096 / 16) = 256, the value the fixture states
    CHECK(count_params(hf(autorank)).total == kTotal);
    json dense = j;
    dense["num_experts"] = 1;  // every layer a JambaMLP
    const auto d = hf(dense);
    CHECK_FALSE(d.is_moe());
    CHECK(count_params(d).total == kTotal - 16 * (kMoe - kMlp));
    json every = j;
    every["attn_layer_period"] = 4;
    every["attn_layer_offset"] = 0;  // layers 0, 4, ..., 28: 8 attention layers
    const auto e = hf(every);
    CHECK(e.num_attention_layers() == 8);
    CHECK(count_params(e).total == kTotal + 4 * kAttention - 4 * kMixer);
    json biased = j;
    biased["mamba_proj_bias"] = true;  // in_proj's 2 d_inner and out_proj's h
    CHECK(count_params(hf(biased)).total - kTotal == 28 * (2 * di + h));
}

TEST_CASE("Jamba: a period of 0, an offset past its period or an unknown key is refused naming it") {
    const json j = fixture();
    json zero = j;
    zero["attn_layer_period"] = 0;
    CHECK(error_field([&] { hf(zero); }) == "attn_layer_period");
    json expert_zero = j;
    expert_zero["expert_layer_period"] = 0;
    CHECK(error_field([&] { hf(expert_zero); }) == "expert_layer_period");
    json offset = j;
    offset["attn_layer_offset"] = 8;  // JambaConfig refuses offset >= period
    CHECK(error_field([&] { hf(offset); }) == "attn_layer_offset");
    CHECK(tally_test::error_message([&] { hf(offset); }).find("[0, 7]") != std::string::npos);
    json rank = j;
    rank["mamba_dt_rank"] = "wide";
    CHECK(error_field([&] { hf(rank); }) == "mamba_dt_rank");
    json window = j;
    window["sliding_window"] = 4096;
    CHECK(error_field([&] { hf(window); }) == "sliding_window");
    json unknown = j;
    unknown["mamba_inner_layernorms"] = false;
    CHECK(error_field([&] { hf(unknown); }) == "mamba_inner_layernorms");
}

// The state per sequence, independently: vLLM's MambaStateShapeCalculator.mamba1_state_shape
// (vllm-project/vllm@02d71083 vllm/model_executor/layers/mamba/mamba_utils.py) gives a conv state (d_inner, d_conv −
// 1) and an SSM state (d_inner, d_state) per layer; transformers' HybridMambaAttentionDynamicCache (modeling_jamba.py)
// keeps d_conv columns, one more. The 4 attention layers cache K and V of 8 heads of 128.
TEST_CASE("Jamba 1.5 Mini inference: 28 Mamba-1 layers hold 8.7 MB per sequence, 4 attention layers 16 KiB a token") {
    const auto c = hf(fixture());
    const auto k = tally::kv_cache(c, 262144, 1, tally::DType::BF16, tally::DType::BF16);
    const u64 vllm_state = 28 * (di * (K - 1) + di * N) * 2;
    const u64 transformers_state = 28 * (di * K + di * N) * 2;
    CHECK(k.state_bytes_per_sequence == vllm_state);
    CHECK(k.state_bytes_per_sequence == transformers_state - 28 * di * 2);
    CHECK(k.state_bytes_per_sequence == 8'716'288u);
    CHECK(tally::mamba_state_values(c) == 155'648u);
    CHECK(k.bytes_per_token == 4u * 2 * 8 * 128 * 2);
    CHECK(k.kv_cache_bytes == 262144u * k.bytes_per_token + k.state_bytes_per_sequence);
    const auto groups = tally::kv_layer_groups(c, k, 262144, tally::DType::BF16, tally::DType::BF16);
    REQUIRE(groups.size() == 2);
    CHECK(std::string(groups[1].kind) == "mamba");
    CHECK(groups[1].layers == 28);
    CHECK(groups[0].bytes_per_sequence + groups[1].bytes_per_sequence == k.bytes_per_sequence(262144));
}

// Per token of a Mamba-1 layer: the four projections' multiply-adds, the conv, and the selective scan's update and
// readout, 2 N each per channel (Gu & Dao 2023, arXiv:2312.00752, Algorithm 2).
TEST_CASE("Jamba FLOPs: the Mamba-1 mixer in 28 layers, attention in 4, experts in 16") {
    const auto c = hf(fixture());
    tally::FlopsInput in;
    in.seq = 4096;
    in.attention = tally::AttentionFlops::Causal;
    const auto r = tally::count_flops(c, in);
    const double s = 4096, H = 4096, D = 8192;
    const double mixer_token = 2 * H * 2 * D + 2 * D * 4 + 2 * D * (256 + 32) + 2 * 256 * D + 4 * D * 16 + 2 * D * H;
    REQUIRE(tally_test::flops_term(r, "mamba") != nullptr);
    CHECK(tally_test::flops_term(r, "mamba")->forward_per_sequence == s * mixer_token * 28);
    CHECK(tally_test::flops_term(r, "qkv")->forward_per_sequence == 2 * s * H * (4096 + 2 * 1024) * 4);
    CHECK(tally_test::flops_term(r, "mlp")->forward_per_sequence == 2 * s * H * 3 * 14336 * (2 * 16 + 16));
    CHECK(tally_test::flops_term(r, "router")->forward_per_sequence == 2 * s * H * 16 * 16);
}

TEST_CASE("Mamba-1 in the tally config object: round-trips, and its fields are checked") {
    const auto c = hf(fixture());
    const json o = tally::model_to_json(c);
    CHECK(o["mamba_version"] == 1);
    CHECK(o["mamba_inner"] == 8192);
    CHECK_FALSE(o.contains("mamba_heads"));
    CHECK(tally::model_from_json(o) == c);
    json heads = o;
    heads["mamba_heads"] = 64;  // Mamba-1 has no heads
    CHECK(error_field([&] { tally::model_from_json(heads); }) == "mamba_heads");
    json rank = o;
    rank.erase("mamba_dt_rank");
    CHECK(error_field([&] { tally::model_from_json(rank); }) == "mamba_dt_rank");
    json version = o;
    version["mamba_version"] = 3;
    CHECK(error_field([&] { tally::model_from_json(version); }) == "mamba_version");
    json norm = o;
    norm["mamba_norm"] = false;  // the Mamba-2 gated norm: Mamba-1 has none to drop
    CHECK(error_field([&] { tally::model_from_json(norm); }) == "mamba_norm");
    json stray = tally::model_to_json(hf(tally_test::hf_fixture("falcon-h1-7b-instruct")));
    stray["mamba_dt_norms"] = true;  // Jamba's Δ/B/C norms on a Mamba-2 mixer
    CHECK(error_field([&] { tally::model_from_json(stray); }) == "mamba_dt_norms");
    json no_norms = o;
    no_norms.erase("mamba_dt_norms");
    CHECK(count_params(c).total - count_params(tally::model_from_json(no_norms)).total == 28u * (256 + 2 * 16));
}

TEST_CASE("the jamba-1-5-mini preset is Jamba 1.5 Mini's config.json, counted the same") {
    auto c = tally_test::preset("jamba-1-5-mini");
    auto imported = hf(fixture());
    c.name = imported.name;
    CHECK(c == imported);
    CHECK(count_params(c).total == kTotal);
}
