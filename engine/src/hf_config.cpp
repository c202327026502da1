#include "tally/hf_config.h"

#include <string>

#include "tally/error.h"
#include "tally/input.h"

namespace tally {

namespace {

using json = nlohmann::json;

// A config.json key, required or with a default; errors name the HF key and the model type.
std::int64_t hf_int(const json& config, const char* key, const std::string& type, std::int64_t low, std::int64_t high) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null())
        throw InputError(
            key, std::string("config.json field \"") + key + "\" is missing (required for model_type " + type + ")");
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
    if (!it->is_boolean())
        throw InputError(key, std::string("config.json field \"") + key + "\" must be true or false");
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
    if (act == "silu" || act == "swish")
        c.mlp = MlpKind::SwiGlu;
    else if (act.rfind("gelu", 0) == 0)
        c.mlp = MlpKind::GeGlu;
    else
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu or gelu*, got \"" + act + "\"");
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

// BertConfig / RobertaConfig: post-LN encoder with biases everywhere, learned absolute positions,
// token-type embeddings and a LayerNorm on the summed embeddings, no final norm, a pooler
// (BertModel / RobertaModel, transformers modeling_bert.py and modeling_roberta.py); the MLM decoder
// is tied to the word embeddings.
ModelConfig load_bert_like(const json& j, const std::string& type) {
    ModelConfig c;
    c.architecture = Architecture::Encoder;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                    std::to_string(c.hidden_size) + "), got " +
                                                    std::to_string(c.num_heads));
    c.num_kv_heads = c.num_heads;
    c.head_dim = c.hidden_size / c.num_heads;
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    // BertConfig defaults: max_position_embeddings 512, type_vocab_size 2 (configuration_bert.py).
    c.max_positions = hf_int_or(j, "max_position_embeddings", 512, 1, kMaxPositions);
    c.type_vocab_size = hf_int_or(j, "type_vocab_size", 2, 0, kMaxVocab);
    const std::string position = hf_string_or(j, "position_embedding_type", "absolute");
    if (position != "absolute")
        throw InputError("position_embedding_type",
                         "config.json field \"position_embedding_type\" must be absolute, got \"" + position + "\"");
    const std::string act = hf_string_or(j, "hidden_act", "gelu");
    if (act.rfind("gelu", 0) != 0 && act != "relu")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be gelu* or relu, got \"" + act + "\"");
    c.mlp = MlpKind::Gelu;  // two matrices (intermediate, output)
    c.norm = NormKind::LayerNorm;
    c.position = PositionKind::Learned;
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = true;
    c.tied_embeddings = true;
    c.embedding_norm = true;
    c.final_norm = false;
    c.pooler = true;
    // BertConfig: hidden_dropout_prob (embeddings, attention output, layer output), attention_probs_dropout_prob.
    c.attention_dropout = hf_probability_or(j, "attention_probs_dropout_prob", 0.1);
    c.residual_dropout = c.embedding_dropout = hf_probability_or(j, "hidden_dropout_prob", 0.1);
    return c;
}

// T5Config: encoder-decoder, RMS-style T5LayerNorm (weight only), no biases, relative-position bias
// tables in the first layer of each stack, shared input embedding; feed_forward_proj "relu" (T5 v1.0:
// wi, wo) or "gated-gelu" (T5 v1.1: wi_0, wi_1, wo); lm_head tied unless tie_word_embeddings is false
// (transformers configuration_t5.py, modeling_t5.py).
ModelConfig load_t5(const json& j) {
    const std::string type = "t5";
    ModelConfig c;
    c.architecture = Architecture::EncoderDecoder;
    c.hidden_size = hf_int(j, "d_model", type, 1, kMaxHidden);
    c.head_dim = hf_int(j, "d_kv", type, 1, kMaxHidden);
    c.num_heads = hf_int(j, "num_heads", type, 1, kMaxHidden);
    c.num_kv_heads = c.num_heads;
    c.ffn_hidden_size = hf_int(j, "d_ff", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    const std::int64_t encoder_layers = hf_int(j, "num_layers", type, 1, kMaxLayers);
    // num_decoder_layers: null means num_layers (T5Config).
    c.num_decoder_layers = hf_int_or(j, "num_decoder_layers", encoder_layers, 1, kMaxLayers);
    c.num_layers = encoder_layers + c.num_decoder_layers;
    c.relative_attention_buckets = hf_int_or(j, "relative_attention_num_buckets", 32, 1, kMaxPositions);
    const std::string ff = hf_string_or(j, "feed_forward_proj", "relu");
    if (ff == "relu" || ff == "gelu")
        c.mlp = MlpKind::Gelu;  // two matrices
    else if (ff == "gated-gelu")
        c.mlp = MlpKind::GeGlu;
    else if (ff == "gated-silu")
        c.mlp = MlpKind::SwiGlu;
    else
        throw InputError("feed_forward_proj",
                         "config.json field \"feed_forward_proj\" must be relu, gelu, gated-gelu or "
                         "gated-silu, got \"" +
                             ff + "\"");
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Relative;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", true);
    // T5Config: dropout_rate 0.1 on attention probabilities, every sub-layer output and the embeddings.
    c.attention_dropout = c.residual_dropout = c.embedding_dropout = hf_probability_or(j, "dropout_rate", 0.1);
    return c;
}

}  // namespace

const char* hf_model_types() { return "llama, mistral, qwen2, mixtral, gpt2, bert, roberta, t5"; }

ModelConfig load_hf_config(const json& j) {
    if (!j.is_object()) throw InputError("hf_config", "config.json must be a JSON object");
    auto it = j.find("model_type");
    if (it == j.end() || !it->is_string())
        throw InputError("model_type",
                         std::string("config.json field \"model_type\" is missing; supported: ") + hf_model_types());
    const std::string type = it->get<std::string>();
    ModelConfig c;
    if (type == "llama" || type == "mistral" || type == "qwen2" || type == "mixtral")
        c = load_llama_like(j, type);
    else if (type == "gpt2")
        c = load_gpt2(j);
    else if (type == "bert" || type == "roberta")
        c = load_bert_like(j, type);
    else if (type == "t5")
        c = load_t5(j);
    else
        throw InputError("model_type",
                         "config.json model_type \"" + type + "\" is not supported; supported: " + hf_model_types());
    auto name = j.find("_name_or_path");
    c.name = (name != j.end() && name->is_string() && !name->get<std::string>().empty()) ? name->get<std::string>()
                                                                                         : "config.json (" + type + ")";
    validate(c);
    return c;
}

ModelConfig load_hf_config_text(std::string_view text) {
    return load_hf_config(parse_json_input(text, "hf_config", "config.json"));
}

}  // namespace tally
