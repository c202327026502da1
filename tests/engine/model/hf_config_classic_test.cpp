// Issue 36: config.json for older and mid-2024 model types (hf_config_classic.cpp): Gemma 1, Granite 3, Qwen1.5-MoE,
// DeepSeek-V2, GPT-NeoX (Pythia) and StarCoder2, each against a published exact total and refusing its bad keys.
#include <catch2/catch.hpp>

#include <cstdint>

#include "accounting_helpers.h"
#include "tally/compute/flops.h"
#include "tally/model/hf_config.h"
#include "tally/model/params.h"

using tally::count_params;
using tally_test::error_field;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

json fixture(const std::string& name) { return tally_test::hf_fixture(name); }
tally::ModelConfig hf(const json& j) { return tally::load_hf_config(j); }
u64 total(const json& j) { return count_params(hf(j)).total; }

}  // namespace

// Fixture: google/gemma-7b's config.json as copied in MaziyarPanahi/gemma-7b-alpaca-52k-v0.1 at
// 83c14e6a7172a6b78acabc97c16c505ef357e818 (_name_or_path google/gemma-7b). Total: 8,537,680,896, KerasHub's
// "params" for gemma_7b_en (github:keras-team/keras-hub@cf8818bc455638d605bc9905b45826abf008e9c1
// keras_hub/src/models/gemma/gemma_presets.py).
TEST_CASE("Gemma 1 7B (gemma) counts 8,537,680,896 parameters: GeGLU, head_dim 256, tied embeddings by default") {
    const json g = fixture("gemma-7b");
    const auto c = hf(g);
    CHECK(c.mlp == tally::MlpKind::GeGlu);
    CHECK(c.head_dim == 256);
    CHECK(c.tied_embeddings);  // GemmaConfig's default: the fixture has no tie_word_embeddings
    CHECK_FALSE(c.sandwich_norm);
    CHECK(total(g) == 8'537'680'896u);
    // hidden_activation overrides hidden_act (GemmaMLP); a non-GeLU one is refused by name.
    json silu = g;
    silu["hidden_activation"] = "silu";
    CHECK(error_field([&] { hf(silu); }) == "hidden_activation");
    json relu = g;
    relu["hidden_activation"] = nullptr;  // null: hidden_act decides, and the error names it
    relu["hidden_act"] = "relu";
    CHECK(error_field([&] { hf(relu); }) == "hidden_act");
    json unknown = g;
    unknown["query_pre_attn_scalar"] = 256;  // Gemma 2's key: not understood for Gemma 1, so refused
    CHECK(error_field([&] { hf(unknown); }) == "query_pre_attn_scalar");
}

// Fixture: ibm-granite/granite-3.1-2b-instruct's config.json as copied in NikIman1/companio_test (main; its
// _name_or_path). Total: 2,533,531,648, the safetensors count recorded for ibm-granite/granite-3.1-2b-instruct at
// revision bbc2aed595 (and for ibm-granite/granite-guardian-3.1-2b at 81145486e85c6c82c01e759c0356d9d6da4d21a5,
// same shapes) in public model inventories.
TEST_CASE("Granite 3.1 2B (granite) counts as Llama: 2,533,531,648; its multipliers change no parameter") {
    const json g = fixture("granite-3.1-2b-instruct");
    CHECK(total(g) == 2'533'531'648u);
    json scaled = g;
    scaled["embedding_multiplier"] = 1.0;
    scaled["residual_multiplier"] = 1.0;
    CHECK(total(scaled) == total(g));
    // The Llama count: 2·V·h would be untied; Granite 3 ties, so V·h once.
    json untied = g;
    untied["tie_word_embeddings"] = false;
    CHECK(total(untied) == total(g) + 49'155u * 2048u);
    json moe = g;
    moe["num_local_experts"] = 40;  // granitemoe's key: refused for the dense type rather than ignored
    CHECK(error_field([&] { hf(moe); }) == "num_local_experts");
}

// Fixture: Qwen/Qwen1.5-MoE-A2.7B's config.json as copied in MaziyarPanahi/Qwen1.5-MoE-A2.7B-Wikihow at
// f2045481b0b67a1324363fa416dca672026c1d28 (_name_or_path Qwen/Qwen1.5-MoE-A2.7B). Total: 14,315,784,192, KerasHub's
// "params" for qwen1.5_moe_2.7b_en (github:keras-team/keras-hub@6214a1b4575e934546d3b8a72d54923fbd38cd18
// keras_hub/src/models/qwen_moe/qwen_moe_presets.py), and the count chatllm.cpp prints on loading it
// (github:foldl/chatllm.cpp@56c61da2b92012cc56e9efa5192b0262fa7d9d58 docs/tool_calling.md).
TEST_CASE("Qwen1.5-MoE-A2.7B (qwen2_moe) counts 14,315,784,192: 60 experts, a 4x-wide gated shared expert") {
    const json q = fixture("qwen1.5-moe-a2.7b");
    const auto c = hf(q);
    CHECK(c.num_experts == 60);
    CHECK(c.experts_per_token == 4);
    CHECK(c.num_shared_experts == 4);  // shared_expert_intermediate_size 5632 = 4 x moe_intermediate_size 1408
    CHECK(c.shared_expert_gate);
    CHECK(c.qkv_bias);
    CHECK_FALSE(c.attn_out_bias);
    const auto p = count_params(c);
    CHECK(p.total == 14'315'784'192u);
    // Active: everything but the 56 routed experts a token skips in each of the 24 layers (3 matrices h x 1408).
    CHECK(p.active == p.total - u64{24} * 56 * 3 * 2048 * 1408);
    json odd = q;
    odd["shared_expert_intermediate_size"] = 5000;
    CHECK(error_field([&] { hf(odd); }) == "shared_expert_intermediate_size");
    json sparse = q;
    sparse["decoder_sparse_step"] = 2;
    CHECK(error_field([&] { hf(sparse); }) == "decoder_sparse_step");
    json no_bias = q;
    no_bias["qkv_bias"] = false;
    CHECK(error_field([&] { hf(no_bias); }) == "qkv_bias");
}

// Fixture: deepseek-ai/DeepSeek-Coder-V2-Lite-Base's config.json (huggingface.co blame main at 5a3cf15). Total:
// 15,706,484,224, the count chatllm.cpp prints on loading DeepSeek-Coder-V2-Lite
// (github:foldl/chatllm.cpp@56c61da2b92012cc56e9efa5192b0262fa7d9d58 docs/tool_calling.md); public model tables give
// the same for deepseek-ai/DeepSeek-V2-Lite, whose shapes are the same.
TEST_CASE("DeepSeek-Coder-V2-Lite (deepseek_v2) counts 15,706,484,224: V3's MLA and MoE, no router bias, no MTP") {
    const json d = fixture("deepseek-coder-v2-lite-base");
    const auto c = hf(d);
    CHECK(c.is_mla());
    CHECK(c.q_lora_rank == 0);
    CHECK(c.num_dense_layers == 1);
    CHECK_FALSE(c.router_bias);  // greedy routing keeps no e_score_correction_bias
    CHECK(c.mtp_modules == 0);
    const auto p = count_params(c);
    CHECK(p.total == 15'706'484'224u);
    // The same config read as deepseek_v3 (noaux_tc) adds one bias per expert per MoE layer: the gate differs.
    json v3 = d;
    v3["model_type"] = "deepseek_v3";
    v3["topk_method"] = "noaux_tc";
    CHECK(total(v3) == p.total + 26u * 64u);
    json wrong = d;
    wrong["topk_method"] = "noaux_tc";
    CHECK(error_field([&] { hf(wrong); }) == "topk_method");
    json mtp = d;
    mtp["num_nextn_predict_layers"] = 1;
    CHECK(error_field([&] { hf(mtp); }) == "num_nextn_predict_layers");
}

// Fixtures: EleutherAI/pythia-160m (huggingface.co blob main, commit 610be53) and EleutherAI/pythia-6.9b (b8a5bb6)
// config.json. Totals: the Pythia suite's table, 162,322,944 and 6,857,302,016 parameters
// (github:EleutherAI/pythia@dd90b7971f51592d2bb89a9bfce9893c365a80df README.md).
TEST_CASE("Pythia 160M and 6.9B (gpt_neox) count 162,322,944 and 6,857,302,016: biases, LayerNorm, untied head") {
    const json small = fixture("pythia-160m");
    const auto c = hf(small);
    CHECK(c.norm == tally::NormKind::LayerNorm);
    CHECK(c.mlp == tally::MlpKind::Gelu);
    CHECK(c.qkv_bias);
    CHECK(c.attn_out_bias);
    CHECK(c.mlp_bias);
    CHECK_FALSE(c.tied_embeddings);
    CHECK(total(small) == 162'322'944u);
    CHECK(total(fixture("pythia-6.9b")) == 6'857'302'016u);
    // The same README's non-embedding count, 85,056,000: the total less embed_in and embed_out.
    CHECK(total(small) - 2u * 50'304u * 768u == 85'056'000u);
    // Parallel residual changes neither parameters nor matmuls: forward FLOPs per token over s tokens are
    // 2·(L·(4h² + 2hf) + V·h) plus QKᵀ and A·V, 4·s·h per layer (full attention).
    tally::FlopsInput in;
    in.seq = 2048;
    const auto f = tally::count_flops(c, in);
    const double h = 768, L = 12, ff = 3072, V = 50304, s = 2048;
    CHECK(f.forward_per_token == Approx(2 * (L * (4 * h * h + 2 * h * ff) + V * h) + L * 4 * s * h));
    json serial = small;
    serial["use_parallel_residual"] = false;
    CHECK(count_flops(hf(serial), in).forward_per_token == f.forward_per_token);
    json gqa = small;
    gqa["num_key_value_heads"] = 4;
    CHECK(error_field([&] { hf(gqa); }) == "num_key_value_heads");
    json extra = small;
    extra["moe_intermediate_size"] = 512;
    CHECK(error_field([&] { hf(extra); }) == "moe_intermediate_size");
}

// Fixture: bigcode/starcoder2-3b's config.json as copied in OpenVINO/starcoder2-3b-int8-ov at
// c1cc7147d839e0d240c5e7ed994f494f38ef7cb2 (_name_or_path bigcode/starcoder2-3b). No exact published total was found
// (the Hub shows "3.03B params"; model.safetensors is 12.1 GB in F32, 4 bytes each), so the check is the module
// arithmetic of modeling_starcoder2.py: per layer two LayerNorms (2·2h), q/k/v/o with biases, c_fc/c_proj with biases.
TEST_CASE("StarCoder2 3B (starcoder2) counts its modules: GQA with biases, LayerNorm, c_fc/c_proj, tied") {
    const json sc = fixture("starcoder2-3b");
    const auto c = hf(sc);
    CHECK(c.num_kv_heads == 2);
    CHECK(c.tied_embeddings);
    CHECK(c.num_sliding_layers == 30);
    CHECK(c.sliding_window == 4096);
    const u64 h = 3072, f = 12288, kv = 2 * 128, V = 49152, L = 30;
    const u64 layer = 4 * h + (h * h + h) + 2 * (kv * h + kv) + (h * h + h) + (f * h + f) + (h * f + h);
    CHECK(total(sc) == V * h + L * layer + 2 * h);
    CHECK(total(sc) == 3'030'371'328u);
    CHECK(total(sc) * 4 / 100'000'000 == 121u);  // 12.1 GB of F32, as the Hub lists model.safetensors
    json rms = sc;
    rms["norm_type"] = "rms_norm";
    CHECK(error_field([&] { hf(rms); }) == "norm_type");
    json gated = sc;
    gated["mlp_type"] = "gated";
    CHECK(error_field([&] { hf(gated); }) == "mlp_type");
}

// Fixture: allenai/OLMoE-1B-7B-0924-SFT's config.json (huggingface.co blame at
// 94619a7898108045a7a3cdc435f68706fe0f505b). Total: 6,919,161,856 BF16 parameters in 3,219 tensors, the safetensors
// headers of allenai/OLMoE-1B-7B-0924-Instruct (same shapes) at revision 7f1c97f440f06ce36705e4f2b843edb5925f4498 as
// parsed and recorded in public verification notes.
TEST_CASE("OLMoE-1B-7B (olmoe) counts 6,919,161,856 in 3,219 tensors: whole-projection QK norms, 64 experts") {
    const json o = fixture("olmoe-1b-7b-0924-sft");
    const auto c = hf(o);
    CHECK(c.qk_norm);
    CHECK(c.qk_norm_full);
    CHECK(c.num_experts == 64);
    CHECK(c.num_shared_experts == 0);
    const auto p = count_params(c);
    CHECK(p.total == 6'919'161'856u);
    // 16 layers of q, k, v, o, q_norm, k_norm, two norms, the router and 64 experts of 3 matrices; embedding,
    // final norm and LM head: the checkpoint's 3,219 tensors.
    std::int64_t tensors = 0;
    for (const auto& t : tally::model_tensors(c))
        tensors += t.per_layer ? tally::tensor_layers(c, t) * (t.expert ? c.num_experts : 1) : 1;
    CHECK(tensors == 3219);
    CHECK(p.active == p.total - u64{16} * 56 * 3 * 2048 * 1024);
    json shared = o;
    shared["shared_expert_intermediate_size"] = 1024;  // Qwen2-MoE's key: OLMoE has no shared expert
    CHECK(error_field([&] { hf(shared); }) == "shared_expert_intermediate_size");
}

// Fixture: internlm/internlm2_5-7b-chat's config.json (huggingface.co blame at
// 50cb6b567020b5300fd183a12b3f5f44ec3ae112). Total: 7,737,708,544, the count chatllm.cpp prints on loading
// InternLM 2.5 7B (github:foldl/chatllm.cpp@56c61da2b92012cc56e9efa5192b0262fa7d9d58 docs/tool_calling.md).
TEST_CASE("InternLM2.5 7B (internlm2) counts as Llama: 7,737,708,544; its `bias` key biases wqkv and wo") {
    const json m = fixture("internlm2.5-7b-chat");
    const auto c = hf(m);
    CHECK_FALSE(c.qkv_bias);
    CHECK(c.num_kv_heads == 8);
    CHECK(total(m) == 7'737'708'544u);
    // bias: true adds wqkv's (a + 2·kv)·d and wo's h per layer, and nothing to the MLP.
    json biased = m;
    biased["bias"] = true;
    CHECK(total(biased) == total(m) + u64{32} * ((4096 + 2 * 1024) + 4096));
    json moe = m;
    moe["num_experts"] = 8;
    CHECK(error_field([&] { hf(moe); }) == "num_experts");
}
