#include "tally/hf_config.h"

#include <string>

#include "tally/error.h"
#include "tally/input.h"

namespace tally {

namespace {

using json = nlohmann::json;

// A config.json key, required or with a default; errors name the HF key and the model type.
std::int64_t hf_int(const json& config, const char* key, const std::string& type, std::int64_t low,
                    std::int64_t high) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null())
        throw InputError(key, std::string("config.json field \"") + key + "\" is missing (required for model_type " +
                                  type + ")");
    return json_integer(*it, key, low, high);
}

std::int64_t hf_int_or(const json& config, const char* key, std::int64_t fallback, std::int64_t low,
                       std::int64_t high) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    return json_integer(*it, key, low, high);
}

bool hf_bool_or(const json& config, const char* key, bool fallback) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(key, std::string("config.json field \"") + key + "\" must be true or false");
    return it->get<bool>();
}

// A dropout probability from config.json; absent takes the transformers class default.
double hf_probability_or(const json& config, const char* key, double fallback) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() < 1))
        throw InputError(key, std::string("config.json field \"") + key + "\" must be a probability in [0, 1)");
    return it->get<double>();
}

std::string hf_string_or(const json& config, const char* key, const char* fallback) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw InputError(key, std::string("config.json field \"") + key + "\" must be a string");
    return it->get<std::string>();
}

// Llama-family (LlamaConfig, MistralConfig, Qwen2Config, MixtralConfig in transformers): RMSNorm,
// rotary positions, gated MLP whose activation is hidden_act.
ModelConfig load_llama_like(const json& j, const std::string& type) {
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
        c.head_dim = hf_int(j, "head_dim", type, 1, kMaxHidden);
    } else {
        if (c.hidden_size % c.num_heads != 0)
            throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                        std::to_string(c.hidden_size) + "), got " +
                                                        std::to_string(c.num_heads));
        c.head_dim = c.hidden_size / c.num_heads;
    }
    c.num_kv_heads = hf_int_or(j, "num_key_value_heads", c.num_heads, 1, c.num_heads);
    if (c.num_heads % c.num_kv_heads != 0)
        throw InputError("num_key_value_heads", "num_key_value_heads must divide num_attention_heads (" +
                                                    std::to_string(c.num_heads) + "), got " +
                                                    std::to_string(c.num_kv_heads));
    const std::string act = hf_string_or(j, "hidden_act", "silu");
    if (act == "silu" || act == "swish") c.mlp = MlpKind::SwiGlu;
    else if (act.rfind("gelu", 0) == 0) c.mlp = MlpKind::GeGlu;
    else throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu or gelu*, got \"" + act + "\"");
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    if (type == "qwen2") {
        // Qwen2Attention: q/k/v_proj with bias, o_proj without (transformers modeling_qwen2.py).
        c.qkv_bias = true;
        c.attn_out_bias = false;
    } else {
        // LlamaAttention: attention_bias covers q, k, v and o; LlamaMLP: mlp_bias (default false).
        c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
    }
    c.mlp_bias = hf_bool_or(j, "mlp_bias", false);
    // LlamaConfig, MistralConfig, Qwen2Config, MixtralConfig: attention_dropout defaults to 0.0 and is the
    // only dropout in these decoder layers (no residual or embedding dropout modules in transformers).
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    if (type == "mixtral") {
        c.num_experts = hf_int(j, "num_local_experts", type, 1, kMaxExperts);
        c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    }
    return c;
}

// GPT2Config: LayerNorm with bias, learned positions, GELU MLP, biases everywhere, LM head tied.
ModelConfig load_gpt2(const json& j) {
    const std::string type = "gpt2";
    ModelConfig c;
    c.hidden_size = hf_int(j, "n_embd", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "n_layer", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "n_head", type, 1, kMaxHidden);
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("n_head", "n_head must divide n_embd (" + std::to_string(c.hidden_size) + "), got " +
                                       std::to_string(c.num_heads));
    c.num_kv_heads = c.num_heads;
    c.head_dim = c.hidden_size / c.num_heads;
    // n_inner: null means 4 * n_embd (GPT2MLP in transformers).
    c.ffn_hidden_size = hf_int_or(j, "n_inner", 0, 1, kMaxFfn);
    if (c.ffn_hidden_size == 0) {
        if (c.hidden_size > kMaxFfn / 4) throw InputError("n_embd", "n_embd is too large for the default n_inner");
        c.ffn_hidden_size = 4 * c.hidden_size;
    }
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int(j, "n_positions", type, 1, kMaxPositions);
    c.mlp = MlpKind::Gelu;
    c.norm = NormKind::LayerNorm;
    c.position = PositionKind::Learned;
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = true;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", true);
    // GPT2Config defaults: attn_pdrop = resid_pdrop = embd_pdrop = 0.1 (transformers configuration_gpt2.py).
    c.attention_dropout = hf_probability_or(j, "attn_pdrop", 0.1);
    c.residual_dropout = hf_probability_or(j, "resid_pdrop", 0.1);
    c.embedding_dropout = hf_probability_or(j, "embd_pdrop", 0.1);
    return c;
}

}  // namespace

const char* hf_model_types() { return "llama, mistral, qwen2, mixtral, gpt2"; }

ModelConfig load_hf_config(const json& j) {
    if (!j.is_object()) throw InputError("hf_config", "config.json must be a JSON object");
    auto it = j.find("model_type");
    if (it == j.end() || !it->is_string())
        throw InputError("model_type", std::string("config.json field \"model_type\" is missing; supported: ") +
                                           hf_model_types());
    const std::string type = it->get<std::string>();
    ModelConfig c;
    if (type == "llama" || type == "mistral" || type == "qwen2" || type == "mixtral")
        c = load_llama_like(j, type);
    else if (type == "gpt2")
        c = load_gpt2(j);
    else
        throw InputError("model_type", "config.json model_type \"" + type + "\" is not supported; supported: " +
                                           hf_model_types());
    auto name = j.find("_name_or_path");
    c.name = (name != j.end() && name->is_string() && !name->get<std::string>().empty())
                 ? name->get<std::string>()
                 : "config.json (" + type + ")";
    validate(c);
    return c;
}

ModelConfig load_hf_config_text(std::string_view text) {
    return load_hf_config(parse_json_input(text, "hf_config", "config.json"));
}

}  // namespace tally
