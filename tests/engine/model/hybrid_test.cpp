// Issue 36: hybrid models. Qwen3-Next (gated DeltaNet linear attention beside gated softmax attention) and Granite
// 4.0-H (Mamba-2 beside GQA): parameters tensor by tensor, FLOPs of the recurrent layers, and the recurrent state
// that replaces the KV cache of those layers in the inference memory and its capacity.
#include <catch2/catch.hpp>

#include <cstdint>

#include "accounting_helpers.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/memory/kvcache.h"
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

}  // namespace

// Fixture: Qwen/Qwen3-Next-80B-A3B-Instruct's config.json. The model card gives "80B in total and 3B activated",
// 48 layers in 12 blocks of 3 × (Gated DeltaNet → MoE) + 1 × (Gated Attention → MoE), 16 Q / 2 KV heads of 256,
// 32 V / 16 QK linear heads of 128, 512 experts, 10 routed + 1 shared. No exact published total was found (the
// Hub's safetensors figure includes the MTP layer, which transformers does not load), so the exact check is the
// sum below, written module by module from transformers' modeling_qwen3_next.py independently of tally's tensor
// list.
TEST_CASE("Qwen3-Next-80B-A3B: 36 gated DeltaNet layers and 12 gated-attention layers count module by module") {
    const auto c = hf(fixture("qwen3-next-80b-a3b"));
    CHECK(c.num_linear_layers == 36);  // full_attention_interval 4: layers 3, 7, ..., 47 keep softmax attention
    CHECK(c.num_attention_layers() == 12);
    const u64 h = 2048, V = 151936;
    // Qwen3NextGatedDeltaNet: in_proj_qkvz h -> 2·16·128 + 2·32·128, in_proj_ba h -> 2·32, conv1d (2·2048 + 4096)
    // x 4, dt_bias and A_log 32 each, norm 128, out_proj 4096 -> h.
    const u64 deltanet = h * (2 * 2048 + 2 * 4096) + h * 64 + 8192 * 4 + 32 + 32 + 128 + 4096 * h;
    // Qwen3NextAttention: q_proj h -> 16·256·2 (query and gate), k/v_proj h -> 2·256, o_proj 4096 -> h, q/k_norm 256.
    const u64 attention = h * 8192 + 2 * h * 512 + 4096 * h + 2 * 256;
    // Qwen3NextSparseMoeBlock: router 512 x h, 512 experts of 3·h·512, shared expert 3·h·512, shared_expert_gate h.
    const u64 moe = 512 * h + 512 * 3 * h * 512 + 3 * h * 512 + h;
    const u64 expected = 2 * V * h + 36 * deltanet + 12 * attention + 48 * (moe + 2 * h) + h;
    const auto p = count_params(c);
    CHECK(p.total == expected);
    CHECK(p.linear_attention == 36 * deltanet);
    CHECK(p.attention == 12 * attention);
    // The model card's round figures: 80B total, 3B activated (the activated figure leaves out the embeddings).
    CHECK(p.total > 79'500'000'000u);
    CHECK(p.total < 80'500'000'000u);
    const u64 active_moe = 512 * h + 10 * 3 * h * 512 + 3 * h * 512 + h;
    CHECK(p.active == 2 * V * h + 36 * deltanet + 12 * attention + 48 * (active_moe + 2 * h) + h);
    CHECK((p.active - 2 * V * h) / 1'000'000'000 == 3);
}

// Fixture: ibm-granite/granite-4.0-h-small's config.json: 40 layers, 36 Mamba-2 and 4 attention (layer_types), 72
// experts (top 10) of 768 plus a shared MLP of 1536, Mamba-2 of 128 heads x 64 with a 128-wide state and one
// group. The model card gives "32B" total and "9B" active; the exact check is the sum below from transformers'
// modeling_granitemoehybrid.py, module by module.
TEST_CASE("Granite 4.0-H-Small: 36 Mamba-2 layers and 4 GQA layers, each with 72 experts and a shared MLP") {
    const auto c = hf(fixture("granite-4.0-h-small"));
    CHECK(c.num_mamba_layers == 36);
    CHECK(c.num_attention_layers() == 4);
    CHECK(c.mamba_d_inner() == 2 * 4096);  // mamba_expand · hidden_size
    const u64 h = 4096, V = 100352, di = 8192, conv = 8192 + 2 * 128;
    // GraniteMoeHybridMambaLayer: in_proj h -> d_inner + conv_dim + heads, conv1d conv_dim x 4 + bias, dt_bias,
    // A_log, D per head, gated norm d_inner, out_proj d_inner -> h.
    const u64 mamba = h * (di + conv + 128) + conv * 4 + conv + 3 * 128 + di + di * h;
    const u64 attention = h * 4096 + 2 * h * 1024 + 4096 * h;
    // Router 72 x h, experts' input_linear 2·768 x h and output_linear h x 768, shared MLP 2·1536 x h + h x 1536.
    const u64 moe = 72 * h + 72 * 3 * h * 768 + 3 * h * 1536;
    const auto p = count_params(c);
    CHECK(p.total == V * h + 36 * mamba + 4 * attention + 40 * (moe + 2 * h) + h);  // tied head
    CHECK(p.mamba == 36 * mamba);
    CHECK((p.total + 500'000'000) / 1'000'000'000 == 32);
    CHECK((p.active + 500'000'000) / 1'000'000'000 == 9);
}

// The state per sequence: Mamba-2 (d_inner + 2·G·N)·(k − 1) + H·P·N elements a layer, gated DeltaNet
// (2·H_k·d_k + H_v·d_v)·(k − 1) + H_v·d_k·d_v (vLLM's state shapes, kvcache.h), in bf16. Issue 36 measured the
// hybrids' state at 22-77 MB a sequence; Granite 4.0-H-Small is the 77 MB end.
TEST_CASE("the recurrent state replaces the KV cache of a hybrid's Mamba-2 and DeltaNet layers, whatever the context") {
    const auto g = hf(fixture("granite-4.0-h-small"));
    const u64 granite_state = 36u * ((8192 + 2 * 128) * 3 + 128 * 64 * 128) * 2;
    CHECK(granite_state == 77'322'240u);
    const auto short_ctx = tally::kv_cache(g, 4096, 1, tally::DType::BF16, tally::DType::BF16);
    const auto long_ctx = tally::kv_cache(g, 131072, 1, tally::DType::BF16, tally::DType::BF16);
    CHECK(short_ctx.state_bytes_per_sequence == granite_state);
    CHECK(long_ctx.state_bytes_per_sequence == granite_state);
    // Only the 4 attention layers cache K and V: 2 · 8 heads · 128 · 2 bytes each.
    CHECK(short_ctx.bytes_per_token == 4u * 2 * 8 * 128 * 2);
    CHECK(long_ctx.kv_cache_bytes == 131072u * 16384 + granite_state);
    CHECK(long_ctx.total_bytes == long_ctx.kv_cache_bytes + long_ctx.weights_bytes);

    const auto q = hf(fixture("qwen3-next-80b-a3b"));
    const auto k = tally::kv_cache(q, 32768, 4, tally::DType::BF16, tally::DType::BF16);
    const u64 qwen_state = 36u * ((2 * 16 * 128 + 32 * 128) * 3 + 32 * 128 * 128) * 2;
    CHECK(k.state_bytes_per_sequence == qwen_state);
    CHECK(k.bytes_per_token == 12u * 2 * 2 * 256 * 2);
    CHECK(k.kv_cache_bytes == 4 * (32768 * k.bytes_per_token + qwen_state));

    // The layer table: the attention layers' per-token cache and the recurrent layers' fixed state add up.
    const auto groups = tally::kv_layer_groups(g, long_ctx, 131072, tally::DType::BF16, tally::DType::BF16);
    REQUIRE(groups.size() == 2);
    CHECK(std::string(groups[0].kind) == "full");
    CHECK(groups[0].layers == 4);
    CHECK(std::string(groups[1].kind) == "mamba");
    CHECK(groups[1].recurrent);
    CHECK(groups[1].layers == 36);
    CHECK(groups[1].tokens == 0);
    CHECK(groups[1].state_values == (8192u + 256) * 3 + 128u * 64 * 128);
    CHECK(groups[0].bytes_per_sequence + groups[1].bytes_per_sequence == long_ctx.bytes_per_sequence(131072));
}

TEST_CASE("capacity counts the state once per sequence, beside a cache that grows with the context") {
    const auto g = hf(fixture("granite-4.0-h-small"));
    const auto k = tally::kv_cache(g, 65536, 8, tally::DType::BF16, tally::DType::BF16);
    const u64 usable = 140'000'000'000u;
    const auto cap = tally::kv_capacity(k, 65536, 8, usable);
    const u64 per_sequence = 65536u * k.bytes_per_token + k.state_bytes_per_sequence;
    CHECK(cap.max_batch == (usable - k.weights_bytes) / per_sequence);
    CHECK(cap.max_context == (usable - k.weights_bytes - 8 * k.state_bytes_per_sequence) / (8 * k.bytes_per_token));
    // A model of Mamba-2 layers only caches nothing per token: the context is not what limits it.
    auto pure = g;
    pure.num_mamba_layers = pure.num_layers;
    const auto kp = tally::kv_cache(pure, 65536, 8, tally::DType::BF16, tally::DType::BF16);
    CHECK(kp.bytes_per_token == 0);
    CHECK(tally::kv_capacity(kp, 65536, 8, usable).max_context == (u64{1} << 40));
}

TEST_CASE("FLOPs: attention over the attention layers only, the recurrent layers linear in the sequence") {
    const auto g = hf(fixture("granite-4.0-h-small"));
    tally::FlopsInput in;
    in.seq = 4096;
    in.attention = tally::AttentionFlops::Causal;
    const auto r = tally::count_flops(g, in);
    const double s = 4096, h = 4096;
    REQUIRE(term(r, "qkv") != nullptr);
    CHECK(term(r, "qkv")->forward_per_sequence == 2 * s * h * (4096 + 2 * 1024) * 4);
    CHECK(term(r, "attn_scores")->forward_per_sequence == 2 * (s * (s + 1) / 2) * 4096 * 4);
    // Mamba-2 per token: in_proj and out_proj, conv 2·conv_dim·k, recurrence 4·H·P·N (Dao & Gu 2024, sec. 3).
    const double conv = 8192 + 256;
    const double mamba_token = 2 * h * (8192 + conv + 128) + 2 * conv * 4 + 4 * 8192.0 * 128 + 2 * 8192 * h;
    REQUIRE(term(r, "mamba") != nullptr);
    CHECK(term(r, "mamba")->forward_per_sequence == s * mamba_token * 36);
    // Twice the sequence: twice the Mamba work, more than twice the attention scores.
    in.seq = 8192;
    const auto r2 = tally::count_flops(g, in);
    CHECK(term(r2, "mamba")->forward_per_sequence == 2 * term(r, "mamba")->forward_per_sequence);
    CHECK(term(r2, "attn_scores")->forward_per_sequence > 2 * term(r, "attn_scores")->forward_per_sequence);

    const auto q = hf(fixture("qwen3-next-80b-a3b"));
    const auto rq = tally::count_flops(q, in);
    // Gated DeltaNet per token: projections, conv, 6·H_v·d_k·d_v (Yang et al. 2024, eq. 10); 36 layers.
    const double qh = 2048, state = 32.0 * 128 * 128;
    const double delta_token = 2 * qh * (2 * 2048 + 2 * 4096 + 64) + 2 * 8192.0 * 4 + 6 * state + 2 * 4096 * qh;
    REQUIRE(term(rq, "linear_attention") != nullptr);
    CHECK(term(rq, "linear_attention")->forward_per_sequence == 8192 * delta_token * 36);
    // Gated attention: q_proj's output gate doubles Q's rows, on 12 layers.
    CHECK(term(rq, "qkv")->forward_per_sequence == 2 * 8192.0 * qh * (2 * 4096 + 2 * 512) * 12);
}

TEST_CASE("bad hybrid input is refused naming the field") {
    json g = fixture("granite-4.0-h-small");
    json short_list = g;
    short_list["layer_types"].erase(0);
    CHECK(error_field([&] { hf(short_list); }) == "layer_types");
    json unknown = g;
    unknown["layer_types"][3] = "linear_attention";
    CHECK(error_field([&] { hf(unknown); }) == "layer_types");
    json heads = g;
    heads["mamba_n_heads"] = 100;  // does not divide 2 · 4096
    heads.erase("mamba_d_head");
    CHECK(error_field([&] { hf(heads); }) == "mamba_n_heads");
    json head_dim = g;
    head_dim["mamba_d_head"] = 32;  // 128 · 32 != 8192
    CHECK(error_field([&] { hf(head_dim); }) == "mamba_d_head");
    json groups = g;
    groups["mamba_n_groups"] = 3;
    CHECK(error_field([&] { hf(groups); }) == "mamba_n_groups");
    json missing = g;
    missing.erase("layer_types");
    CHECK(error_field([&] { hf(missing); }) == "layer_types");

    json q = fixture("qwen3-next-80b-a3b");
    json value_heads = q;
    value_heads["linear_num_value_heads"] = 24;  // not a multiple of 16 key heads
    CHECK(error_field([&] { hf(value_heads); }) == "linear_num_value_heads");
    json types = q;
    types["layer_types"] = json::array({"linear_attention", "full_attention"});  // 2 entries for 48 layers
    CHECK(error_field([&] { hf(types); }) == "layer_types");
    json listed = q;
    listed["layer_types"] = json::array();
    for (int i = 0; i < 48; ++i) listed["layer_types"].push_back(i % 2 ? "full_attention" : "linear_attention");
    CHECK(hf(listed).num_linear_layers == 24);

    // The tally config object: the kinds' counts and widths are checked too, and round-trip.
    const auto c = hf(fixture("qwen3-next-80b-a3b"));
    json o = tally::model_to_json(c);
    CHECK(count_params(tally::model_from_json(o)).total == count_params(c).total);
    json over = o;
    over["num_linear_layers"] = 49;
    CHECK(error_field([&] { tally::model_from_json(over); }) == "num_linear_layers");
    json zero = o;
    zero["linear_key_head_dim"] = 0;
    CHECK(error_field([&] { tally::model_from_json(zero); }) == "linear_key_head_dim");
    json m = tally::model_to_json(hf(fixture("granite-4.0-h-small")));
    m["mamba_groups"] = 3;
    CHECK(error_field([&] { tally::model_from_json(m); }) == "mamba_groups");
    json both = m;
    both["mamba_groups"] = 1;
    both["num_linear_layers"] = 10;  // 36 Mamba-2 + 10 > 40 layers
    both["linear_key_heads"] = both["linear_value_heads"] = 1;
    both["linear_key_head_dim"] = both["linear_value_head_dim"] = both["linear_conv_kernel"] = 4;
    CHECK(error_field([&] { tally::model_from_json(both); }) == "num_mamba_layers");
}
