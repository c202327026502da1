#include "tally/model/model.h"

#include <algorithm>
#include <cmath>

#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/base/json_members.h"
#include "tally/base/names.h"
#include "tally/base/presets.h"

namespace tally {

namespace {

using json = nlohmann::json;

std::string range_text(std::int64_t low, std::int64_t high) {
    return "[" + std::to_string(low) + ", " + std::to_string(high) + "]";
}

bool json_bool(const json& object, const char* field, bool fallback) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(field, std::string(field) + " must be true or false");
    return it->get<bool>();
}

std::int64_t json_int_field(const json& object, const char* field, std::int64_t low, std::int64_t high,
                            std::int64_t fallback, bool required) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) {
        if (required)
            throw InputError(field,
                             std::string(field) + " is required (a whole number in " + range_text(low, high) + ")");
        return fallback;
    }
    return json_integer(*it, field, low, high);
}

// A dropout probability in [0, 1); absent means the model has no such dropout layer.
double json_probability(const json& object, const char* field) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) return 0;
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() < 1))
        throw InputError(field, std::string(field) + " must be a probability in [0, 1)");
    return it->get<double>();
}

std::string json_enum(const json& object, const char* field, const char* fallback) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) {
        if (fallback == nullptr) throw InputError(field, std::string(field) + " is required");
        return fallback;
    }
    if (!it->is_string()) throw InputError(field, std::string(field) + " must be a string");
    return it->get<std::string>();
}

void require_decoder(const ModelConfig& c, const char* field) {
    if (c.architecture != Architecture::Decoder)
        throw InputError(field, std::string(field) + " applies to a decoder (architecture decoder) only");
}

// DeepSeek Sparse Attention: the indexer reads MLA's q_lora latent, and its heads split like MLA's into a RoPE
// part of qk_rope_head_dim and the rest (DeepSeek-V3.2-Exp inference/model.py, Indexer).
void validate_indexer(const ModelConfig& c) {
    require_range("index_topk", c.index_topk, 0, kMaxSeq);
    if (!c.has_indexer()) {
        require_range("index_n_heads", c.index_n_heads, 0, 0);
        require_range("index_head_dim", c.index_head_dim, 0, 0);
        return;
    }
    require_decoder(c, "index_topk");
    if (c.q_lora_rank == 0)
        throw InputError("index_topk",
                         "index_topk (DeepSeek Sparse Attention) needs latent attention with a Q latent "
                         "(kv_lora_rank > 0, q_lora_rank > 0): the indexer's queries come from that latent");
    if (c.sliding_window > 0 || c.is_hybrid())
        throw InputError("index_topk",
                         "index_topk (DeepSeek Sparse Attention) applies to models without sliding-window or hybrid "
                         "layers");
    require_range("index_n_heads", c.index_n_heads, 1, kMaxHidden);
    require_range("index_head_dim", c.index_head_dim, std::max<std::int64_t>(1, c.qk_rope_head_dim), kMaxHidden);
}

// The fields of latent attention, DeepSeek-style MoE, sliding windows, sinks and QK-norm.
void validate_modern(const ModelConfig& c) {
    require_range("v_head_dim", c.v_head_dim, 0, kMaxHidden);
    require_range("kv_lora_rank", c.kv_lora_rank, 0, kMaxHidden);
    if (c.is_mla()) {
        require_decoder(c, "kv_lora_rank");
        // Every head gets its own K and V from the latent: MLA has as many K/V heads as query heads.
        if (c.num_kv_heads != c.num_heads)
            throw InputError("num_kv_heads", "latent attention (kv_lora_rank > 0) needs num_kv_heads = num_heads (" +
                                                 std::to_string(c.num_heads) + "), got " +
                                                 std::to_string(c.num_kv_heads));
        require_range("q_lora_rank", c.q_lora_rank, 0, kMaxHidden);
        require_range("qk_rope_head_dim", c.qk_rope_head_dim, 0, c.head_dim - 1);
    } else {
        require_range("q_lora_rank", c.q_lora_rank, 0, 0);
        require_range("qk_rope_head_dim", c.qk_rope_head_dim, 0, 0);
    }
    if (c.is_moe()) {
        require_range("num_dense_layers", c.num_dense_layers, 0, c.num_layers - 1);
    } else {
        require_range("num_dense_layers", c.num_dense_layers, 0, 0);
        if (c.router_bias)
            throw InputError("router_bias", "router_bias needs a mixture-of-experts model (num_experts > 0)");
    }
    require_range("dense_ffn_hidden_size", c.dense_ffn_hidden_size, c.num_dense_layers > 0 ? 1 : 0,
                  c.num_dense_layers > 0 ? kMaxFfn : 0);
    require_range("mtp_modules", c.mtp_modules, 0, 64);
    if (c.mtp_modules > 0) require_decoder(c, "mtp_modules");
    require_range("sliding_window", c.sliding_window, 0, kMaxSeq);
    require_range("num_sliding_layers", c.num_sliding_layers, c.sliding_window > 0 ? 1 : 0,
                  c.sliding_window > 0 ? c.num_layers : 0);
    if (c.sliding_window > 0) require_decoder(c, "sliding_window");
    if (c.qk_norm_full && !c.qk_norm) throw InputError("qk_norm_full", "qk_norm_full needs qk_norm");
    validate_indexer(c);
    require_range("vision_params", c.vision_params, 0, kMaxVision);
}

// Hybrid layers (model.h): each kind's widths are required when it has layers and must be 0 otherwise.
void validate_hybrid(const ModelConfig& c) {
    require_range("num_mlp_layers", c.num_mlp_layers, 0, c.num_layers);
    require_range("num_linear_layers", c.num_linear_layers, 0, c.num_layers - c.num_mlp_layers);
    require_range("num_mamba_layers", c.num_mamba_layers, 0, c.num_layers - c.num_mlp_layers - c.num_linear_layers);
    if (c.single_module_blocks()) {
        // Single-module blocks are modelled for dense decoders with pre-norms (Nemotron-H's shape) only.
        const char* field = c.num_mlp_layers > 0 ? "num_mlp_layers" : "mixer_blocks_without_mlp";
        require_decoder(c, field);
        if (c.is_moe() || c.sandwich_norm || c.mtp_modules > 0)
            throw InputError(field, std::string(field) +
                                        " (single-module blocks) applies to a dense model without sandwich norms or "
                                        "MTP modules");
    }
    if (c.is_hybrid()) require_decoder(c, c.num_linear_layers > 0 ? "num_linear_layers" : "num_mamba_layers");
    const bool linear = c.num_linear_layers > 0, mamba = c.num_mamba_layers > 0;
    const std::int64_t lo_l = linear ? 1 : 0, hi_l = linear ? kMaxHidden : 0;
    require_range("linear_key_heads", c.linear_key_heads, lo_l, hi_l);
    require_range("linear_value_heads", c.linear_value_heads, lo_l, hi_l);
    require_range("linear_key_head_dim", c.linear_key_head_dim, lo_l, hi_l);
    require_range("linear_value_head_dim", c.linear_value_head_dim, lo_l, hi_l);
    require_range("linear_conv_kernel", c.linear_conv_kernel, lo_l, linear ? 1024 : 0);
    // Gated DeltaNet repeats each key head over linear_value_heads / linear_key_heads value heads
    // (transformers modeling_qwen3_next.py, Qwen3NextGatedDeltaNet: num_v_heads // num_k_heads).
    if (linear && c.linear_value_heads % c.linear_key_heads != 0)
        throw InputError("linear_value_heads", "linear_value_heads (" + std::to_string(c.linear_value_heads) +
                                                   ") must be a multiple of linear_key_heads (" +
                                                   std::to_string(c.linear_key_heads) + ")");
    if (!linear && c.linear_kind != LinearKind::GatedDeltaNet)
        throw InputError("linear_kind", "linear_kind kda needs linear-attention layers (num_linear_layers > 0)");
    // KDA has one head count for Q, K and V (vllm kda.py, KimiDeltaAttention: num_heads · head_dim for all three).
    if (linear && c.linear_kind == LinearKind::Kda && c.linear_value_heads != c.linear_key_heads)
        throw InputError("linear_value_heads", "linear_value_heads (" + std::to_string(c.linear_value_heads) +
                                                   ") must equal linear_key_heads (" +
                                                   std::to_string(c.linear_key_heads) + ") for linear_kind kda");
    require_range("mamba_version", c.mamba_version, 1, 2);
    const bool v1 = mamba && c.is_mamba1(), v2 = mamba && !c.is_mamba1();
    if (!mamba && c.is_mamba1())
        throw InputError("mamba_version", "mamba_version 1 needs Mamba layers (num_mamba_layers > 0)");
    const std::int64_t lo_m = v2 ? 1 : 0, hi_m = v2 ? kMaxHidden : 0;
    // Mamba-1 has no heads or groups: each of its d_inner channels has its own state row (Gu & Dao 2023, sec. 3.2).
    require_range("mamba_heads", c.mamba_heads, lo_m, hi_m);
    require_range("mamba_head_dim", c.mamba_head_dim, lo_m, hi_m);
    require_range("mamba_groups", c.mamba_groups, lo_m, hi_m);
    require_range("mamba_inner", c.mamba_inner, v1 ? 1 : 0, v1 ? kMaxHidden : 0);
    require_range("mamba_dt_rank", c.mamba_dt_rank, v1 ? 1 : 0, v1 ? kMaxHidden : 0);
    if (c.mamba_dt_norms && !v1)
        throw InputError("mamba_dt_norms",
                         "mamba_dt_norms (Jamba's Δ, B and C norms) needs Mamba-1 layers "
                         "(mamba_version 1, num_mamba_layers > 0)");
    if (c.is_mamba1() && !c.mamba_norm)
        throw InputError("mamba_norm",
                         "mamba_norm is the Mamba-2 gated norm; Mamba-1 (mamba_version 1) has none, so "
                         "leave mamba_norm at its default");
    require_range("mamba_d_state", c.mamba_d_state, mamba ? 1 : 0, mamba ? kMaxHidden : 0);
    require_range("mamba_conv_kernel", c.mamba_conv_kernel, mamba ? 1 : 0, mamba ? 1024 : 0);
    // Mamba-2 heads share B and C within a group: the groups divide the heads (Dao & Gu 2024, sec. 7.2).
    if (v2 && c.mamba_heads % c.mamba_groups != 0)
        throw InputError("mamba_groups", "mamba_groups (" + std::to_string(c.mamba_groups) +
                                             ") must divide mamba_heads (" + std::to_string(c.mamba_heads) + ")");
    if (!mamba && (c.mamba_conv_bias || c.mamba_proj_bias))
        throw InputError(c.mamba_conv_bias ? "mamba_conv_bias" : "mamba_proj_bias",
                         "mamba_conv_bias and mamba_proj_bias need Mamba-2 layers (num_mamba_layers > 0)");
    if (!mamba && !c.mamba_norm)
        throw InputError("mamba_norm", "mamba_norm false needs Mamba-2 layers (num_mamba_layers > 0)");
    // A parallel hybrid (Falcon-H1) has attention and a Mamba-2 mixer in every layer, and no other kind of layer.
    if (c.parallel_hybrid) {
        if (c.num_mamba_layers != c.num_layers)
            throw InputError("num_mamba_layers",
                             "a parallel hybrid (parallel_hybrid) has a Mamba-2 mixer in every "
                             "layer: num_mamba_layers must be num_layers (" +
                                 std::to_string(c.num_layers) + "), got " + std::to_string(c.num_mamba_layers));
        if (c.num_linear_layers > 0 || c.single_module_blocks())
            throw InputError("parallel_hybrid",
                             "parallel_hybrid (attention and Mamba-2 side by side in every layer) excludes "
                             "linear-attention layers and single-module blocks");
    }
    // Windowed layers are softmax-attention layers.
    if (c.num_sliding_layers > c.num_attention_layers())
        throw InputError("num_sliding_layers", "num_sliding_layers (" + std::to_string(c.num_sliding_layers) +
                                                   ") exceeds the attention layers (" +
                                                   std::to_string(c.num_attention_layers()) + ")");
    if (c.shared_expert_gate && c.num_shared_experts == 0)
        throw InputError("shared_expert_gate", "shared_expert_gate needs a shared expert (num_shared_experts > 0)");
    if (c.attn_output_gate && c.is_mla())
        throw InputError("attn_output_gate", "attn_output_gate applies to standard attention, not latent attention");
}

}  // namespace

std::int64_t json_integer(const json& value, const std::string& field, std::int64_t low, std::int64_t high) {
    if (value.is_number_integer()) {
        // nlohmann keeps unsigned values above INT64_MAX as uint64.
        if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(high))
            throw InputError(field, field + " must be a whole number in " + range_text(low, high) + ", got " +
                                        std::to_string(value.get<std::uint64_t>()));
        const std::int64_t v = value.get<std::int64_t>();
        require_range(field.c_str(), v, low, high);
        return v;
    }
    if (value.is_number_float()) {
        const double v = value.get<double>();
        if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(low) || v > static_cast<double>(high))
            throw InputError(
                field, field + " must be a whole number in " + range_text(low, high) + ", got " + format_number(v));
        return static_cast<std::int64_t>(v);
    }
    throw InputError(field, field + " must be a whole number in " + range_text(low, high) + ", got " +
                                std::string(value.type_name()));
}

namespace {
constexpr Named<MlpKind> kMlpNames[] = {
    {MlpKind::Gelu, "gelu"}, {MlpKind::SwiGlu, "swiglu"}, {MlpKind::GeGlu, "geglu"}};
constexpr Named<NormKind> kNormNames[] = {{NormKind::LayerNorm, "layernorm"}, {NormKind::RmsNorm, "rmsnorm"}};
constexpr Named<PositionKind> kPositionNames[] = {
    {PositionKind::Learned, "learned"}, {PositionKind::Rotary, "rotary"}, {PositionKind::Relative, "relative"}};
constexpr Named<Architecture> kArchitectureNames[] = {{Architecture::Decoder, "decoder"},
                                                      {Architecture::Encoder, "encoder"},
                                                      {Architecture::EncoderDecoder, "encoder_decoder"}};
constexpr Named<LinearKind> kLinearKindNames[] = {{LinearKind::GatedDeltaNet, "gated_deltanet"},
                                                  {LinearKind::Kda, "kda"}};
}  // namespace

const char* to_string(MlpKind kind) { return name_of(kMlpNames, kind, "?"); }
const char* to_string(NormKind kind) { return name_of(kNormNames, kind, "rmsnorm"); }
const char* to_string(PositionKind kind) { return name_of(kPositionNames, kind, "relative"); }
const char* to_string(Architecture kind) { return name_of(kArchitectureNames, kind, "?"); }
const char* to_string(LinearKind kind) { return name_of(kLinearKindNames, kind, "?"); }

void validate(const ModelConfig& c) {
    require_range("vocab_size", c.vocab_size, 1, kMaxVocab);
    require_range("hidden_size", c.hidden_size, 1, kMaxHidden);
    require_range("num_layers", c.num_layers, 1, kMaxLayers);
    require_range("num_heads", c.num_heads, 1, kMaxHidden);
    require_range("head_dim", c.head_dim, 1, kMaxHidden);
    require_range("num_kv_heads", c.num_kv_heads, 1, c.num_heads);
    if (c.num_heads % c.num_kv_heads != 0)
        throw InputError("num_kv_heads", "num_kv_heads must divide num_heads (" + std::to_string(c.num_heads) +
                                             "), got " + std::to_string(c.num_kv_heads));
    require_range("ffn_hidden_size", c.ffn_hidden_size, 1, kMaxFfn);
    if (c.position == PositionKind::Learned)
        require_range("max_positions", c.max_positions, 1, kMaxPositions);
    else
        require_range("max_positions", c.max_positions, 0, kMaxPositions);
    require_range("num_experts", c.num_experts, 0, kMaxExperts);
    for (const auto& [field, p] :
         {std::pair{"attention_dropout", c.attention_dropout}, std::pair{"residual_dropout", c.residual_dropout},
          std::pair{"embedding_dropout", c.embedding_dropout}})
        if (!(p >= 0 && p < 1)) throw InputError(field, std::string(field) + " must be a probability in [0, 1)");
    if (c.num_experts > 0) {
        require_range("experts_per_token", c.experts_per_token, 1, c.num_experts);
        require_range("num_shared_experts", c.num_shared_experts, 0, kMaxExperts);
    } else {
        require_range("experts_per_token", c.experts_per_token, 0, 0);
        require_range("num_shared_experts", c.num_shared_experts, 0, 0);
    }
    if (c.is_encoder_decoder()) {
        if (c.num_layers < 2)
            throw InputError("num_layers", "an encoder-decoder needs num_layers >= 2 (encoder + decoder)");
        require_range("num_decoder_layers", c.num_decoder_layers, 1, c.num_layers - 1);
    } else {
        require_range("num_decoder_layers", c.num_decoder_layers, 0, 0);
    }
    if ((c.mlm_head || c.nsp_head) && c.architecture != Architecture::Encoder)
        throw InputError(
            c.mlm_head ? "mlm_head" : "nsp_head",
            std::string(c.mlm_head ? "mlm_head" : "nsp_head") + " belongs to an encoder (architecture encoder, BERT)");
    require_range("type_vocab_size", c.type_vocab_size, 0, kMaxVocab);
    require_range("relative_attention_buckets", c.relative_attention_buckets, 0, kMaxPositions);
    validate_modern(c);
    validate_hybrid(c);
    // Widths that multiply into byte counts stay far from 2^63 at these limits; products that
    // could still overflow (e.g. vocab × hidden at both maxima) go through checked_mul.
}

ModelConfig model_from_json(const json& o) {
    if (!o.is_object()) throw InputError("model", "model must be a preset id or a config object");
    ModelConfig c;
    auto name = o.find("name");
    c.name = (name != o.end() && name->is_string()) ? name->get<std::string>() : "custom";
    c.vocab_size = json_int_field(o, "vocab_size", 1, kMaxVocab, 0, true);
    c.hidden_size = json_int_field(o, "hidden_size", 1, kMaxHidden, 0, true);
    c.num_layers = json_int_field(o, "num_layers", 1, kMaxLayers, 0, true);
    c.num_heads = json_int_field(o, "num_heads", 1, c.hidden_size, 0, true);
    c.num_kv_heads = json_int_field(o, "num_kv_heads", 1, c.num_heads, c.num_heads, false);
    if (o.contains("head_dim") && !o["head_dim"].is_null()) {
        c.head_dim = json_int_field(o, "head_dim", 1, kMaxHidden, 0, true);
    } else {
        if (c.hidden_size % c.num_heads != 0)
            throw InputError("num_heads", "num_heads must divide hidden_size (" + std::to_string(c.hidden_size) +
                                              ") when head_dim is not given, got " + std::to_string(c.num_heads));
        c.head_dim = c.hidden_size / c.num_heads;
    }
    const std::string mlp = json_enum(o, "mlp", nullptr);
    if (const auto kind = value_named(kMlpNames, mlp))
        c.mlp = *kind;
    else
        throw InputError("mlp", "mlp must be one of gelu, swiglu, geglu, got \"" + mlp + "\"");
    const std::int64_t default_ffn = c.mlp == MlpKind::Gelu && c.hidden_size <= kMaxFfn / 4 ? 4 * c.hidden_size : 0;
    c.ffn_hidden_size = json_int_field(o, "ffn_hidden_size", 1, kMaxFfn, default_ffn, default_ffn == 0);
    const std::string norm = json_enum(o, "norm", "layernorm");
    if (const auto kind = value_named(kNormNames, norm))
        c.norm = *kind;
    else
        throw InputError("norm", "norm must be layernorm or rmsnorm, got \"" + norm + "\"");
    const std::string position = json_enum(o, "position", "rotary");
    if (const auto kind = value_named(kPositionNames, position))
        c.position = *kind;
    else
        throw InputError("position", "position must be learned, rotary or relative, got \"" + position + "\"");
    c.max_positions = json_int_field(o, "max_positions", c.position == PositionKind::Learned ? 1 : 0, kMaxPositions, 0,
                                     c.position == PositionKind::Learned);
    c.qkv_bias = json_bool(o, "qkv_bias", false);
    c.attn_out_bias = json_bool(o, "attn_out_bias", false);
    c.mlp_bias = json_bool(o, "mlp_bias", false);
    c.tied_embeddings = json_bool(o, "tied_embeddings", false);
    c.num_experts = json_int_field(o, "num_experts", 0, kMaxExperts, 0, false);
    c.experts_per_token = json_int_field(o, "experts_per_token", 0, kMaxExperts, 0, false);
    c.num_shared_experts = json_int_field(o, "num_shared_experts", 0, kMaxExperts, 0, false);
    c.attention_dropout = json_probability(o, "attention_dropout");
    c.residual_dropout = json_probability(o, "residual_dropout");
    c.embedding_dropout = json_probability(o, "embedding_dropout");
    const std::string arch = json_enum(o, "architecture", "decoder");
    if (const auto kind = value_named(kArchitectureNames, arch))
        c.architecture = *kind;
    else
        throw InputError("architecture",
                         "architecture must be decoder, encoder or encoder_decoder, got \"" + arch + "\"");
    c.num_decoder_layers = json_int_field(o, "num_decoder_layers", 0, kMaxLayers, 0, false);
    c.type_vocab_size = json_int_field(o, "type_vocab_size", 0, kMaxVocab, 0, false);
    c.embedding_norm = json_bool(o, "embedding_norm", false);
    c.final_norm = json_bool(o, "final_norm", true);
    c.pooler = json_bool(o, "pooler", false);
    c.mlm_head = json_bool(o, "mlm_head", false);
    c.nsp_head = json_bool(o, "nsp_head", false);
    c.relative_attention_buckets = json_int_field(o, "relative_attention_buckets", 0, kMaxPositions, 0, false);
    c.kv_lora_rank = json_int_field(o, "kv_lora_rank", 0, kMaxHidden, 0, false);
    c.q_lora_rank = json_int_field(o, "q_lora_rank", 0, kMaxHidden, 0, false);
    c.qk_rope_head_dim = json_int_field(o, "qk_rope_head_dim", 0, kMaxHidden, 0, false);
    c.v_head_dim = json_int_field(o, "v_head_dim", 0, kMaxHidden, 0, false);
    c.num_dense_layers = json_int_field(o, "num_dense_layers", 0, kMaxLayers, 0, false);
    c.dense_ffn_hidden_size = json_int_field(o, "dense_ffn_hidden_size", 0, kMaxFfn, 0, false);
    c.router_bias = json_bool(o, "router_bias", false);
    c.mtp_modules = json_int_field(o, "mtp_modules", 0, 64, 0, false);
    c.sliding_window = json_int_field(o, "sliding_window", 0, kMaxSeq, 0, false);
    // A window with no layer count means every layer is windowed (Mistral 7B v0.1).
    c.num_sliding_layers =
        json_int_field(o, "num_sliding_layers", 0, kMaxLayers, c.sliding_window > 0 ? c.num_layers : 0, false);
    c.index_topk = json_int_field(o, "index_topk", 0, kMaxSeq, 0, false);
    c.index_n_heads = json_int_field(o, "index_n_heads", 0, kMaxHidden, 0, false);
    c.index_head_dim = json_int_field(o, "index_head_dim", 0, kMaxHidden, 0, false);
    c.attention_sinks = json_bool(o, "attention_sinks", false);
    c.qk_norm = json_bool(o, "qk_norm", false);
    c.sandwich_norm = json_bool(o, "sandwich_norm", false);
    c.qk_norm_full = json_bool(o, "qk_norm_full", false);
    c.vision_params = json_int_field(o, "vision_params", 0, kMaxVision, 0, false);
    c.num_linear_layers = json_int_field(o, "num_linear_layers", 0, kMaxLayers, 0, false);
    c.linear_key_heads = json_int_field(o, "linear_key_heads", 0, kMaxHidden, 0, false);
    c.linear_value_heads = json_int_field(o, "linear_value_heads", 0, kMaxHidden, 0, false);
    c.linear_key_head_dim = json_int_field(o, "linear_key_head_dim", 0, kMaxHidden, 0, false);
    c.linear_value_head_dim = json_int_field(o, "linear_value_head_dim", 0, kMaxHidden, 0, false);
    c.linear_conv_kernel = json_int_field(o, "linear_conv_kernel", 0, 1024, 0, false);
    const std::string linear_kind = json_enum(o, "linear_kind", "gated_deltanet");
    if (const auto kind = value_named(kLinearKindNames, linear_kind))
        c.linear_kind = *kind;
    else
        throw InputError("linear_kind", "linear_kind must be gated_deltanet or kda, got \"" + linear_kind + "\"");
    c.num_mamba_layers = json_int_field(o, "num_mamba_layers", 0, kMaxLayers, 0, false);
    c.mamba_heads = json_int_field(o, "mamba_heads", 0, kMaxHidden, 0, false);
    c.mamba_head_dim = json_int_field(o, "mamba_head_dim", 0, kMaxHidden, 0, false);
    c.mamba_d_state = json_int_field(o, "mamba_d_state", 0, kMaxHidden, 0, false);
    c.mamba_groups = json_int_field(o, "mamba_groups", 0, kMaxHidden, 0, false);
    c.mamba_conv_kernel = json_int_field(o, "mamba_conv_kernel", 0, 1024, 0, false);
    c.mamba_conv_bias = json_bool(o, "mamba_conv_bias", false);
    c.mamba_proj_bias = json_bool(o, "mamba_proj_bias", false);
    c.mamba_norm = json_bool(o, "mamba_norm", true);
    c.mamba_version = json_int_field(o, "mamba_version", 1, 2, 2, false);
    c.mamba_inner = json_int_field(o, "mamba_inner", 0, kMaxHidden, 0, false);
    c.mamba_dt_rank = json_int_field(o, "mamba_dt_rank", 0, kMaxHidden, 0, false);
    c.mamba_dt_norms = json_bool(o, "mamba_dt_norms", false);
    c.parallel_hybrid = json_bool(o, "parallel_hybrid", false);
    c.attn_output_gate = json_bool(o, "attn_output_gate", false);
    c.shared_expert_gate = json_bool(o, "shared_expert_gate", false);
    c.num_mlp_layers = json_int_field(o, "num_mlp_layers", 0, kMaxLayers, 0, false);
    c.mixer_blocks_without_mlp = json_bool(o, "mixer_blocks_without_mlp", false);
    validate(c);
    return c;
}

json model_to_json(const ModelConfig& c) {
    json o =
        TALLY_MEMBERS(c, name, vocab_size, hidden_size, num_layers, num_heads, num_kv_heads, head_dim, ffn_hidden_size,
                      max_positions, qkv_bias, attn_out_bias, mlp_bias, tied_embeddings, num_experts, experts_per_token,
                      num_shared_experts, attention_dropout, residual_dropout, embedding_dropout);
    o["mlp"] = to_string(c.mlp);
    o["norm"] = to_string(c.norm);
    o["position"] = to_string(c.position);
    // Encoder and encoder-decoder fields appear only when used, so decoder configs print as before.
    if (c.architecture != Architecture::Decoder) o["architecture"] = to_string(c.architecture);
    if (c.num_decoder_layers > 0) o["num_decoder_layers"] = c.num_decoder_layers;
    if (c.type_vocab_size > 0) o["type_vocab_size"] = c.type_vocab_size;
    if (c.embedding_norm) o["embedding_norm"] = true;
    if (!c.final_norm) o["final_norm"] = false;
    if (c.pooler) o["pooler"] = true;
    if (c.mlm_head) o["mlm_head"] = true;
    if (c.nsp_head) o["nsp_head"] = true;
    if (c.relative_attention_buckets > 0) o["relative_attention_buckets"] = c.relative_attention_buckets;
    // Newer architecture fields, likewise only when used.
    if (c.is_mla()) {
        o["kv_lora_rank"] = c.kv_lora_rank;
        o["q_lora_rank"] = c.q_lora_rank;
        o["qk_rope_head_dim"] = c.qk_rope_head_dim;
    }
    if (c.v_head_dim > 0) o["v_head_dim"] = c.v_head_dim;
    if (c.num_dense_layers > 0) {
        o["num_dense_layers"] = c.num_dense_layers;
        o["dense_ffn_hidden_size"] = c.dense_ffn_hidden_size;
    }
    if (c.router_bias) o["router_bias"] = true;
    if (c.mtp_modules > 0) o["mtp_modules"] = c.mtp_modules;
    if (c.sliding_window > 0) {
        o["sliding_window"] = c.sliding_window;
        o["num_sliding_layers"] = c.num_sliding_layers;
    }
    if (c.has_indexer()) {
        o["index_topk"] = c.index_topk;
        o["index_n_heads"] = c.index_n_heads;
        o["index_head_dim"] = c.index_head_dim;
    }
    if (c.attention_sinks) o["attention_sinks"] = true;
    if (c.qk_norm) o["qk_norm"] = true;
    if (c.sandwich_norm) o["sandwich_norm"] = true;
    if (c.qk_norm_full) o["qk_norm_full"] = true;
    if (c.vision_params > 0) o["vision_params"] = c.vision_params;
    if (c.num_linear_layers > 0) {
        o["num_linear_layers"] = c.num_linear_layers;
        o["linear_key_heads"] = c.linear_key_heads;
        o["linear_value_heads"] = c.linear_value_heads;
        o["linear_key_head_dim"] = c.linear_key_head_dim;
        o["linear_value_head_dim"] = c.linear_value_head_dim;
        o["linear_conv_kernel"] = c.linear_conv_kernel;
        if (c.linear_kind != LinearKind::GatedDeltaNet) o["linear_kind"] = to_string(c.linear_kind);
    }
    if (c.num_mamba_layers > 0) {
        o["num_mamba_layers"] = c.num_mamba_layers;
        if (c.is_mamba1()) {
            o["mamba_version"] = 1;
            o["mamba_inner"] = c.mamba_inner;
            o["mamba_dt_rank"] = c.mamba_dt_rank;
            if (c.mamba_dt_norms) o["mamba_dt_norms"] = true;
        } else {
            o["mamba_heads"] = c.mamba_heads;
            o["mamba_head_dim"] = c.mamba_head_dim;
            o["mamba_groups"] = c.mamba_groups;
        }
        o["mamba_d_state"] = c.mamba_d_state;
        o["mamba_conv_kernel"] = c.mamba_conv_kernel;
        if (c.mamba_conv_bias) o["mamba_conv_bias"] = true;
        if (c.mamba_proj_bias) o["mamba_proj_bias"] = true;
        if (!c.mamba_norm) o["mamba_norm"] = false;
        if (c.parallel_hybrid) o["parallel_hybrid"] = true;
    }
    if (c.attn_output_gate) o["attn_output_gate"] = true;
    if (c.shared_expert_gate) o["shared_expert_gate"] = true;
    if (c.num_mlp_layers > 0) o["num_mlp_layers"] = c.num_mlp_layers;
    if (c.mixer_blocks_without_mlp) o["mixer_blocks_without_mlp"] = true;
    return o;
}

namespace {

std::string model_ids() {
    std::string ids;
    for (const auto& m : presets_json().at("models")) {
        if (!ids.empty()) ids += ", ";
        ids += m.at("id").get<std::string>();
    }
    return ids;
}

}  // namespace

ModelConfig model_from_preset(const std::string& id) {
    const json* preset = find_preset("models", id);
    if (preset == nullptr)
        throw InputError("model", "unknown model preset \"" + printable(id, 64) + "\"; known: " + model_ids());
    ModelConfig c = model_from_json(preset->at("config"));
    if (preset->contains("name")) c.name = preset->at("name").get<std::string>();
    return c;
}

void apply_encoder_head(ModelConfig& c, const std::string& head) {
    if (c.architecture != Architecture::Encoder)
        throw InputError("encoder_head", "encoder_head applies to an encoder (BERT, RoBERTa); this model is " +
                                             std::string(c.is_encoder_decoder() ? "an encoder-decoder" : "a decoder"));
    if (head == "model")
        c.pooler = true, c.mlm_head = false, c.nsp_head = false;
    else if (head == "masked_lm")
        c.pooler = false, c.mlm_head = true, c.nsp_head = false;
    else if (head == "pretraining")
        c.pooler = true, c.mlm_head = true, c.nsp_head = true;
    else
        throw InputError("encoder_head",
                         "encoder_head must be model, masked_lm or pretraining, got \"" + printable(head, 40) + "\"");
}

}  // namespace tally
