// Issue 36 item 2: model_type falcon_h1 (Falcon-H1 0.5B to 34B, TII, arXiv:2507.22448). Every layer is a parallel
// hybrid: an RMSNorm, then GQA attention and a Mamba-2 mixer side by side on its output, their outputs summed into the
// residual, then an RMSNorm and a gated MLP (transformers modeling_falcon_h1.py @ 001f85b3, FalconH1DecoderLayer). The
// counts below are written module by module from that file, independently of tally's tensor list.
//
// Fixtures (tests/fixtures/hf/falcon-h1-*.json): the published config.json's keys that shape the model, as read from
// the checkpoints' files by third parties: Falcon-H1-7B-Instruct's (revision 41e72f27, 2025-07-31: 44 layers, hidden
// 3072, MLP 12288, 12 Q / 2 KV heads of 128, Mamba-2 of 24 heads x 128 with d_ssm 3072, d_state 256, one group, conv 4,
// mamba_rms_norm, vocab 130,049, untied) and Falcon-H1-1.5B-Instruct's (revision 80ebc50d: 24 layers, hidden 2048, MLP
// 4608, 8 Q / 2 KV heads of 128, 48 Mamba-2 heads x 64, d_ssm 3072, d_state 256, vocab 65,537, untied, its embedding
// and lm_head multipliers); FalconH1Config's defaults for the rest. The muP multipliers change no count, so the 7B
// fixture leaves them out.
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

// One Falcon-H1 model from modeling_falcon_h1.py: embed_tokens V x h; per layer input_layernorm h; FalconH1Mixer's
// in_proj h -> d_ssm + conv_dim + H (conv_dim = d_ssm + 2·G·N), conv1d conv_dim x 4 with its bias, dt_bias, A_log, D
// per head, the gated norm over d_ssm (mamba_rms_norm), out_proj d_ssm -> h; FalconH1Attention's q/o h x a·d, k/v
// h x kv·d; pre_ff_layernorm h; FalconH1MLP gate/up/down h x f; final_layernorm h; an untied lm_head V x h.
struct Shape {
    u64 V, h, L, a, kv, d, f, d_ssm, H, N;
};
u64 mixer(const Shape& s) {
    const u64 conv = s.d_ssm + 2 * s.N;
    return s.h * (s.d_ssm + conv + s.H) + conv * 4 + conv + 3 * s.H + s.d_ssm + s.d_ssm * s.h;
}
u64 module_sum(const Shape& s) {
    const u64 attention = 2 * s.h * s.a * s.d + 2 * s.h * s.kv * s.d;
    return 2 * s.V * s.h + s.L * (s.h + mixer(s) + attention + s.h + 3 * s.h * s.f) + s.h;
}
const Shape k7b{130049, 3072, 44, 12, 2, 128, 12288, 3072, 24, 256};
const Shape k1_5b{65537, 2048, 24, 8, 2, 128, 4608, 3072, 48, 256};

}  // namespace

// Exact total: the Hub API's safetensors figure for tiiuae/Falcon-H1-7B-Instruct is 7,585,654,880 BF16 parameters (the
// "HF API" row of a fact sheet written from the model's Hub files, and a measured census of the same checkpoint:
// total_params=7585654880); the technical report says 7.59B.
TEST_CASE("Falcon-H1-7B-Instruct's config.json counts 7,585,654,880 parameters, the Hub's safetensors total") {
    const auto c = hf(fixture("falcon-h1-7b-instruct"));
    CHECK(c.parallel_hybrid);
    CHECK(c.num_layers == 44);
    CHECK(c.num_mamba_layers == 44);
    CHECK(c.num_attention_layers() == 44);  // attention in every layer too
    CHECK(c.mamba_d_inner() == 3072);
    const auto p = count_params(c);
    CHECK(p.total == 7'585'654'880u);
    CHECK(p.total == module_sum(k7b));
    CHECK(p.active == p.total);  // dense
    CHECK(p.mamba == 44 * mixer(k7b));
    CHECK(p.attention == 44u * (2 * 3072 * 1536 + 2 * 3072 * 256));
    CHECK(p.norms == 44u * 2 * 3072);
    // One layer holds both mixers, its MLP and its two norms.
    CHECK(p.per_layer == mixer(k7b) + (2 * 3072 * 1536 + 2 * 3072 * 256) + 3u * 3072 * 12288 + 2 * 3072);
}

// Exact total: Falcon-H1-1.5B-Instruct's safetensors header at revision 80ebc50d holds 411 tensors of 1,554,863,488
// elements (a download record that validated the header and summed it: 24 layers x 17 tensors, the embedding, the
// final norm and the untied head); the card says 1.5B.
TEST_CASE("Falcon-H1-1.5B-Instruct counts 1,554,863,488 parameters in 411 tensors, its safetensors header's") {
    const auto c = hf(fixture("falcon-h1-1.5b-instruct"));
    CHECK(c.mamba_heads == 48);
    CHECK(c.mamba_head_dim == 64);
    const auto p = count_params(c);
    CHECK(p.total == 1'554'863'488u);
    CHECK(p.total == module_sum(k1_5b));
    u64 tensors = 0;
    for (const auto& t : tally::model_tensors(c))
        tensors += t.per_layer ? static_cast<u64>(tally::tensor_layers(c, t)) : 1;
    CHECK(tensors == 411);
}

// The state per sequence, independently: transformers' FalconHybridMambaAttentionDynamicCache allocates per layer a
// conv state (d_ssm + 2·G·N) x d_conv and an SSM state H x d_head x d_state; tally keeps the conv's last d_conv − 1
// inputs as vLLM does (kvcache.h), one column fewer. Every one of the 44 layers also caches K and V of 2 heads of 128.
TEST_CASE("Falcon-H1-7B inference: every layer caches K and V and holds a 1.59 MB Mamba-2 state") {
    const auto c = hf(fixture("falcon-h1-7b-instruct"));
    const auto k = tally::kv_cache(c, 131072, 1, tally::DType::BF16, tally::DType::BF16);
    const u64 transformers_state = 44u * (3584 * 4 + 24 * 128 * 256) * 2;
    CHECK(k.state_bytes_per_sequence == transformers_state - 44u * 3584 * 2);
    CHECK(k.state_bytes_per_sequence == 70'152'192u);
    CHECK(k.bytes_per_token == 44u * 2 * 2 * 128 * 2);  // 44 KiB a token
    CHECK(k.kv_cache_bytes == 131072u * k.bytes_per_token + k.state_bytes_per_sequence);
    const auto groups = tally::kv_layer_groups(c, k, 131072, tally::DType::BF16, tally::DType::BF16);
    REQUIRE(groups.size() == 2);
    CHECK(std::string(groups[0].kind) == "full");
    CHECK(groups[0].layers == 44);
    CHECK(std::string(groups[1].kind) == "mamba");
    CHECK(groups[1].layers == 44);
    CHECK(groups[0].bytes_per_sequence + groups[1].bytes_per_sequence == k.bytes_per_sequence(131072));
}

TEST_CASE("Falcon-H1 FLOPs: attention and the Mamba-2 mixer both run in all 44 layers") {
    const auto c = hf(fixture("falcon-h1-7b-instruct"));
    tally::FlopsInput in;
    in.seq = 8192;
    in.attention = tally::AttentionFlops::Causal;
    const auto r = tally::count_flops(c, in);
    const double s = 8192, h = 3072, di = 3072, conv = 3584;
    REQUIRE(tally_test::flops_term(r, "qkv") != nullptr);
    CHECK(tally_test::flops_term(r, "qkv")->forward_per_sequence == 2 * s * h * (1536 + 2 * 256) * 44);
    CHECK(tally_test::flops_term(r, "attn_scores")->forward_per_sequence == 2 * (s * (s + 1) / 2) * 1536 * 44);
    const double mamba_token = 2 * h * (di + conv + 24) + 2 * conv * 4 + 4 * di * 256 + 2 * di * h;
    REQUIRE(tally_test::flops_term(r, "mamba") != nullptr);
    CHECK(tally_test::flops_term(r, "mamba")->forward_per_sequence == s * mamba_token * 44);
    CHECK(tally_test::flops_term(r, "mlp")->forward_per_sequence == 2 * s * h * 12288 * 3 * 44);
}

TEST_CASE("Falcon-H1: the muP multipliers change no count; mamba_rms_norm and the biases do") {
    const json j = fixture("falcon-h1-7b-instruct");
    const u64 total = count_params(hf(j)).total;
    // Falcon-H1-0.5B's multipliers (Megatron-Bridge's test config of it) on the 7B: the same count.
    json mup = j;
    mup["embedding_multiplier"] = 5.656854249492381;
    mup["lm_head_multiplier"] = 0.0390625;
    mup["key_multiplier"] = 0.39062499999999994;
    mup["attention_in_multiplier"] = 1.0;
    mup["attention_out_multiplier"] = 0.9375;
    mup["ssm_in_multiplier"] = 1.25;
    mup["ssm_out_multiplier"] = 0.23570226039551587;
    mup["mlp_multipliers"] = json::array({0.8838834764831844, 0.5859375});
    mup["ssm_multipliers"] = json::array({0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738});
    CHECK(count_params(hf(mup)).total == total);
    json no_norm = j;
    no_norm["mamba_rms_norm"] = false;  // Falcon-H1-0.5B's and Tiny's mixers have no gated norm
    CHECK(total - count_params(hf(no_norm)).total == 44u * 3072);
    json biased = j;
    biased["mamba_proj_bias"] = biased["projectors_bias"] = true;
    CHECK(count_params(hf(biased)).total - total == 44u * ((3072 + 3584 + 24) + 3072));
    json attention_bias = j;
    attention_bias["attention_bias"] = true;
    CHECK(count_params(hf(attention_bias)).total - total == 44u * (1536 + 2 * 256 + 3072));
    // mamba_d_ssm null is mamba_expand · hidden_size (6144 here): 24 heads of 256.
    json expand = j;
    expand["mamba_d_ssm"] = nullptr;
    expand["mamba_d_head"] = "auto";
    CHECK(hf(expand).mamba_head_dim == 256);
}

TEST_CASE(
    "Falcon-H1: a Mamba-2 width that does not divide, a wrong layer list or an unknown key is refused naming it") {
    const json j = fixture("falcon-h1-7b-instruct");
    json head = j;
    head["mamba_d_head"] = 64;  // 24 x 64 != 3072
    CHECK(error_field([&] { hf(head); }) == "mamba_d_head");
    json heads = j;
    heads["mamba_n_heads"] = 25;  // does not divide 3072
    heads["mamba_d_head"] = "auto";
    CHECK(error_field([&] { hf(heads); }) == "mamba_n_heads");
    json groups = j;
    groups["mamba_n_groups"] = 5;  // does not divide 24 heads
    CHECK(error_field([&] { hf(groups); }) == "mamba_n_groups");
    json kv = j;
    kv["num_key_value_heads"] = 5;
    CHECK(error_field([&] { hf(kv); }) == "num_key_value_heads");
    // A layer list (transformers' layers_block_type) must say hybrid for every layer, one per layer.
    json listed = j;
    listed["layers_block_type"] = json::array();
    for (int i = 0; i < 44; ++i) listed["layers_block_type"].push_back("hybrid");
    CHECK(count_params(hf(listed)).total == 7'585'654'880u);
    json short_list = listed;
    short_list["layers_block_type"].erase(0);
    CHECK(error_field([&] { hf(short_list); }) == "layers_block_type");
    json kind = listed;
    kind["layers_block_type"][5] = "mamba";
    CHECK(error_field([&] { hf(kind); }) == "layers_block_type");
    json indices = j;
    indices["attn_layer_indices"] = json::array({0, 4});
    CHECK(error_field([&] { hf(indices); }) == "attn_layer_indices");
    json projectors = j;
    projectors["projectors_bias"] = true;  // out_proj biased, in_proj not: tally has one flag for both
    CHECK(error_field([&] { hf(projectors); }) == "projectors_bias");
    json unknown = j;
    unknown["mamba_d_inner"] = 3072;
    CHECK(error_field([&] { hf(unknown); }) == "mamba_d_inner");
}

TEST_CASE("parallel hybrid: the tally config object round-trips and is checked") {
    const auto c = hf(fixture("falcon-h1-1.5b-instruct"));
    json o = tally::model_to_json(c);
    CHECK(o["parallel_hybrid"] == true);
    CHECK(o.value("mamba_norm", true) == true);
    CHECK(count_params(tally::model_from_json(o)).total == count_params(c).total);
    json fewer = o;
    fewer["num_mamba_layers"] = 12;  // a parallel hybrid has the mixer in every layer
    CHECK(error_field([&] { tally::model_from_json(fewer); }) == "num_mamba_layers");
    // Without the flag, 24 Mamba-2 layers leave no attention layer: the attention is counted nowhere.
    json sequential = o;
    sequential.erase("parallel_hybrid");
    const auto seq = tally::model_from_json(sequential);
    CHECK(seq.num_attention_layers() == 0);
    CHECK(count_params(c).total - count_params(seq).total == 24u * (2 * 2048 * 1024 + 2 * 2048 * 256));
    json norm = o;
    norm["mamba_norm"] = false;
    CHECK(count_params(c).total - count_params(tally::model_from_json(norm)).total == 24u * 3072);
    json stray = tally::model_to_json(hf(fixture("qwen3-8b")));
    stray["mamba_norm"] = false;  // no Mamba-2 layer to drop it from
    CHECK(error_field([&] { tally::model_from_json(stray); }) == "mamba_norm");
}
