#include "hf_config_classic.h"
#include "hf_config_read.h"

#include <initializer_list>
#include <string>

#include "tally/base/error.h"
#include "tally/base/input.h"

namespace tally::hf_classic {

namespace {

using json = nlohmann::json;

// Keys every one of these families may carry that change no count: ids, numerics, initialisation, caching, RoPE
// parameters, the stored dtype and its quantisation, and the shape keys each loader reads itself.
constexpr const char* kCommonKeys[] = {"_name_or_path",
                                       "architectures",
                                       "auto_map",
                                       "model_type",
                                       "transformers_version",
                                       "torch_dtype",
                                       "dtype",
                                       "bos_token_id",
                                       "eos_token_id",
                                       "pad_token_id",
                                       "initializer_range",
                                       "use_cache",
                                       "quantization_config",
                                       "max_position_embeddings",
                                       "rope_theta",
                                       "rope_scaling",
                                       "rope_parameters",
                                       "tie_word_embeddings",
                                       "attention_dropout",
                                       "vocab_size",
                                       "hidden_size",
                                       "intermediate_size",
                                       "num_hidden_layers",
                                       "num_attention_heads",
                                       "num_key_value_heads",
                                       "hidden_act",
                                       "head_dim",
                                       "rms_norm_eps",
                                       "pretraining_tp"};

// Refuses the first key that is neither common nor in `read`: it might change the count.
void only_keys(const json& j, const std::string& type, std::initializer_list<const char*> read) {
    hf_read::refuse_keys_outside(j, type, kCommonKeys, read);
}

std::int64_t need_int(const json& j, const char* key, const std::string& type, std::int64_t low, std::int64_t high) {
    return hf_read::hf_int(j, key, type, low, high);
}

// The attention shape both LayerNorm families share: MHA or GQA, head_dim = hidden / heads.
void read_attention(ModelConfig& c, const json& j, const std::string& type) {
    c.hidden_size = need_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = need_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = need_int(j, "num_attention_heads", type, 1, kMaxHidden);
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                    std::to_string(c.hidden_size) + "), got " +
                                                    std::to_string(c.num_heads));
    c.head_dim = c.hidden_size / c.num_heads;
    c.num_kv_heads = hf_read::hf_int_or(j, "num_key_value_heads", c.num_heads, 1, c.num_heads);
    if (c.num_heads % c.num_kv_heads != 0)
        throw InputError("num_key_value_heads", "num_key_value_heads must divide num_attention_heads (" +
                                                    std::to_string(c.num_heads) + "), got " +
                                                    std::to_string(c.num_kv_heads));
    c.ffn_hidden_size = need_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = need_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_read::hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.position = PositionKind::Rotary;
    c.norm = NormKind::LayerNorm;
    c.mlp = MlpKind::Gelu;  // two matrices: up (c_fc, dense_h_to_4h) and down (c_proj, dense_4h_to_h)
}

// An ungated MLP's activation: any of transformers' ACT2FN names tally knows to be elementwise.
void require_elementwise_act(const json& j, const char* fallback) {
    const std::string act = hf_read::hf_string_or(j, "hidden_act", fallback);
    if (act.rfind("gelu", 0) != 0 && act != "relu" && act != "silu" && act != "swish")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be gelu*, relu or silu, got \"" +
                                           printable(act, 40) + "\"");
}

}  // namespace

// GemmaConfig (transformers configuration_gemma.py): head_dim 256, hidden_act gelu_pytorch_tanh, tied embeddings
// unless told otherwise; hidden_activation, when set, overrides hidden_act (GemmaMLP). GemmaRMSNorm's (1 + w)
// holds h weights like RMSNorm, and the embedding's sqrt(h) scale is not a parameter.
json gemma_as_llama(const json& j) {
    const std::string type = "gemma";
    only_keys(j, type, {"hidden_activation", "attention_bias"});
    json v = j;
    if (!v.contains("head_dim") || v["head_dim"].is_null()) v["head_dim"] = 256;
    if (!v.contains("tie_word_embeddings") || v["tie_word_embeddings"].is_null()) v["tie_word_embeddings"] = true;
    const std::string act = hf_read::hf_string_or(j, "hidden_activation",
                                                  hf_read::hf_string_or(j, "hidden_act", "gelu_pytorch_tanh").c_str());
    if (act.rfind("gelu", 0) != 0)
        throw InputError(
            j.contains("hidden_activation") && !j["hidden_activation"].is_null() ? "hidden_activation" : "hidden_act",
            "config.json field \"hidden_activation\" (or hidden_act) must be gelu* for model_type gemma "
            "(GemmaMLP is gated GeLU), got \"" +
                printable(act, 40) + "\"");
    v["hidden_act"] = act;
    v.erase("hidden_activation");
    return v;
}

// GraniteConfig (transformers configuration_granite.py): LlamaConfig plus embedding_multiplier, logits_scaling,
// residual_multiplier and attention_multiplier, scalars applied in the forward pass (modeling_granite.py).
json granite_as_llama(const json& j) {
    only_keys(j, "granite",
              {"attention_bias", "mlp_bias", "embedding_multiplier", "logits_scaling", "residual_multiplier",
               "attention_multiplier"});
    json v = j;
    for (const char* key : {"embedding_multiplier", "logits_scaling", "residual_multiplier", "attention_multiplier"})
        v.erase(key);
    return v;
}

// InternLM2Config / InternLM2ForCausalLM (internlm/internlm2_5-7b-chat configuration_internlm2.py,
// modeling_internlm2.py): tok_embeddings, a fused wqkv ((a + 2·kv)·d x h) and wo, biased when `bias`; w1, w3, w2
// without bias; RMSNorms; an untied output. Llama's tensors, so `bias` becomes attention_bias.
json internlm2_as_llama(const json& j) {
    only_keys(j, "internlm2", {"bias", "attn_implementation"});
    json v = j;
    v["attention_bias"] = hf_read::hf_bool_or(j, "bias", true);  // InternLM2Config's default is bias=True
    v.erase("bias");
    v.erase("attn_implementation");
    return v;
}

// Qwen2MoeConfig (transformers configuration_qwen2_moe.py): the attention of Qwen2 (q/k/v with bias, o without).
json qwen2_moe_as_qwen2(const json& j) {
    only_keys(
        j, "qwen2_moe",
        {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
         "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob", "output_router_logits", "router_aux_loss_coef",
         "use_sliding_window", "sliding_window", "max_window_layers", "qkv_bias", "layer_types"});
    if (!hf_read::hf_bool_or(j, "qkv_bias", true))
        throw InputError("qkv_bias",
                         "config.json field \"qkv_bias\" must be true for model_type qwen2_moe "
                         "(tally models Qwen2-MoE's biased q/k/v projections)");
    json v = j;
    v.erase("qkv_bias");
    return v;
}

// Qwen2MoeSparseMoeBlock (transformers modeling_qwen2_moe.py): a router gate (num_experts x h, no bias), experts of
// moe_intermediate_size, one shared expert of shared_expert_intermediate_size, and shared_expert_gate =
// Linear(h, 1, bias=False). The shared expert is counted as shared/moe experts of moe width (the same weights and
// FLOPs: gate, up and down split evenly along the inner width), so its width must be a multiple of the experts'.
ModelConfig with_qwen2_moe(const json& j, ModelConfig c) {
    const std::string type = "qwen2_moe";
    if (hf_read::hf_int_or(j, "decoder_sparse_step", 1, 1, kMaxLayers) != 1)
        throw InputError("decoder_sparse_step",
                         "config.json field \"decoder_sparse_step\" must be 1 (every layer MoE); tally does not model "
                         "interleaved dense layers");
    auto only = j.find("mlp_only_layers");
    if (only != j.end() && !only->is_null() && !(only->is_array() && only->empty()))
        throw InputError("mlp_only_layers",
                         "config.json field \"mlp_only_layers\" must be empty; tally does not model dense layers "
                         "among MoE layers");
    c.num_experts = need_int(j, "num_experts", type, 1, kMaxExperts);
    c.experts_per_token = need_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.ffn_hidden_size = need_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
    const std::int64_t shared = hf_read::hf_int_or(j, "shared_expert_intermediate_size", 0, 0, kMaxFfn);
    if (shared % c.ffn_hidden_size != 0)
        throw InputError("shared_expert_intermediate_size",
                         "config.json field \"shared_expert_intermediate_size\" must be a multiple of "
                         "moe_intermediate_size (" +
                             std::to_string(c.ffn_hidden_size) + ") for tally to count the shared expert, got " +
                             std::to_string(shared));
    c.num_shared_experts = shared / c.ffn_hidden_size;
    c.shared_expert_gate = shared > 0;
    c.router_bias = false;
    return c;
}

// OlmoeConfig (transformers configuration_olmoe.py): LlamaConfig's shape keys plus the MoE's; clip_qkv clamps
// activations and changes no count.
json olmoe_as_llama(const json& j) {
    only_keys(j, "olmoe",
              {"attention_bias", "clip_qkv", "num_experts", "num_experts_per_tok", "norm_topk_prob",
               "output_router_logits", "router_aux_loss_coef"});
    return j;
}

// OlmoeAttention / OlmoeSparseMoeBlock (transformers modeling_olmoe.py): q_norm over all of Q (h) and k_norm over all
// of K (kv·d), as OLMo 2's; every layer a MoE of num_experts experts of intermediate_size (top num_experts_per_tok),
// a router gate without bias, no shared expert.
ModelConfig with_olmoe(const json& j, ModelConfig c) {
    const std::string type = "olmoe";
    c.qk_norm = c.qk_norm_full = true;
    c.num_experts = need_int(j, "num_experts", type, 1, kMaxExperts);
    c.experts_per_token = need_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.router_bias = false;
    return c;
}

// DeepseekV2Config (transformers configuration_deepseek_v2.py; deepseek-ai's remote configuration_deepseek.py):
// the same MLA and first_k_dense_replace MoE as DeepSeek-V3, but its routers (topk_method greedy or
// group_limited_greedy, default greedy) keep no e_score_correction_bias and it has no MTP modules.
json deepseek_v2_as_v3(const json& j) {
    json v = j;
    const std::string method = hf_read::hf_string_or(j, "topk_method", "greedy");
    if (method != "greedy" && method != "group_limited_greedy")
        throw InputError("topk_method",
                         "config.json field \"topk_method\" must be greedy or group_limited_greedy for model_type "
                         "deepseek_v2, got \"" +
                             printable(method, 40) + "\" (noaux_tc is DeepSeek-V3's: use model_type deepseek_v3)");
    v["topk_method"] = method;
    if (hf_read::hf_int_or(j, "num_nextn_predict_layers", 0, 0, 64) != 0)
        throw InputError("num_nextn_predict_layers",
                         "config.json field \"num_nextn_predict_layers\" must be 0 for model_type deepseek_v2 "
                         "(DeepSeek-V2 has no multi-token prediction modules)");
    return v;
}

// GPTNeoXConfig / GPTNeoXForCausalLM (transformers modeling_gpt_neox.py): embed_in, per layer input_layernorm and
// post_attention_layernorm (LayerNorm with bias), a fused query_key_value (3h x h) and dense, biased when
// attention_bias (default true), dense_h_to_4h and dense_4h_to_h with biases; final_layer_norm; embed_out untied
// by default. use_parallel_residual reorders the residual adds (x + attn(ln1 x) + mlp(ln2 x)) and rotary_pct rotates
// part of each head: neither changes a parameter or a matmul.
ModelConfig load_gpt_neox(const json& j) {
    const std::string type = "gpt_neox";
    only_keys(j, type,
              {"layer_norm_eps", "rotary_pct", "rotary_emb_base", "partial_rotary_factor", "use_parallel_residual",
               "attention_bias", "hidden_dropout", "classifier_dropout"});
    if (j.contains("num_key_value_heads"))
        throw InputError("num_key_value_heads",
                         "config.json field \"num_key_value_heads\" is not part of model_type gpt_neox "
                         "(GPT-NeoX attention is multi-head)");
    if (j.contains("head_dim"))
        throw InputError("head_dim",
                         "config.json field \"head_dim\" is not part of model_type gpt_neox "
                         "(heads are hidden_size / num_attention_heads wide)");
    ModelConfig c;
    read_attention(c, j, type);
    require_elementwise_act(j, "gelu");
    c.qkv_bias = c.attn_out_bias = hf_read::hf_bool_or(j, "attention_bias", true);
    c.mlp_bias = true;
    c.tied_embeddings = hf_read::hf_bool_or(j, "tie_word_embeddings", false);
    // GPTNeoXConfig: attention_dropout on the probabilities, hidden_dropout after attention and after the MLP.
    c.attention_dropout = hf_read::hf_probability_or(j, "attention_dropout", 0.0);
    c.residual_dropout = hf_read::hf_probability_or(j, "hidden_dropout", 0.0);
    return c;
}

// Starcoder2Config / Starcoder2ForCausalLM (transformers modeling_starcoder2.py): GQA with q, k, v, o biased when
// use_bias (default true), LayerNorm with bias (norm_type layer_norm), c_fc and c_proj biased likewise, a sliding
// window on every layer, embeddings tied by default.
ModelConfig load_starcoder2(const json& j) {
    const std::string type = "starcoder2";
    only_keys(j, type,
              {"norm_epsilon", "norm_type", "mlp_type", "use_bias", "sliding_window", "embedding_dropout",
               "residual_dropout"});
    if (j.contains("head_dim"))
        throw InputError("head_dim",
                         "config.json field \"head_dim\" is not part of model_type starcoder2 "
                         "(heads are hidden_size / num_attention_heads wide)");
    ModelConfig c;
    read_attention(c, j, type);
    require_elementwise_act(j, "gelu_pytorch_tanh");
    if (hf_read::hf_string_or(j, "norm_type", "layer_norm") != "layer_norm")
        throw InputError("norm_type", "config.json field \"norm_type\" must be layer_norm for model_type starcoder2");
    if (hf_read::hf_string_or(j, "mlp_type", "default") != "default")
        throw InputError("mlp_type",
                         "config.json field \"mlp_type\" must be default for model_type starcoder2 "
                         "(the ungated c_fc/c_proj MLP)");
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = hf_read::hf_bool_or(j, "use_bias", true);
    c.tied_embeddings = hf_read::hf_bool_or(j, "tie_word_embeddings", true);
    c.sliding_window = hf_read::hf_int_or(j, "sliding_window", 0, 0, kMaxSeq);
    c.num_sliding_layers = c.sliding_window > 0 ? c.num_layers : 0;
    c.attention_dropout = hf_read::hf_probability_or(j, "attention_dropout", 0.0);
    c.residual_dropout = hf_read::hf_probability_or(j, "residual_dropout", 0.0);
    c.embedding_dropout = hf_read::hf_probability_or(j, "embedding_dropout", 0.0);
    return c;
}

}  // namespace tally::hf_classic
