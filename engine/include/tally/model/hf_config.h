// Hugging Face config.json -> ModelConfig, for the model_types in TALLY_HF_MODEL_TYPES: decoders (dense, MoE,
// latent attention, sliding windows), bert and roberta (encoders), t5 (encoder-decoder), and multimodal wrappers
// (their text_config's language model; the vision tower counted apart in vision_params where tally knows it).
#pragma once

// The supported model_types, once: a macro so the CLI's compile-time help text can splice it in.
#define TALLY_HF_MODEL_TYPES                                                                                       \
    "llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, phi3, olmo2, olmo3, smollm3, deepseek_v3, deepseek_v32, "   \
    "kimi_k2, glm4_moe, ernie4_5_moe, minimax_m2, qwen3_next, granitemoehybrid, nemotron_h, falcon_h1, jamba, "    \
    "kimi_linear, gpt_oss, gemma2, gemma3_text, llama4_text, gpt2, bert, roberta, t5, gemma, granite, qwen2_moe, " \
    "deepseek_v2, olmoe, internlm2, gpt_neox, starcoder2; "                                                        \
    "multimodal (language model from text_config): gemma3, mistral3, llama4, qwen3_vl, qwen3_vl_moe"

#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/model/model.h"

namespace tally {

// The model types load_hf_config understands, comma-separated, for messages and --help.
const char* hf_model_types();

// From a parsed config.json object. Unknown model_type, missing or ill-typed fields throw InputError
// whose field is the config.json key ("num_attention_heads").
ModelConfig load_hf_config(const nlohmann::json& config);

// From config.json text. Malformed JSON throws InputError(field "hf_config") with the byte position.
ModelConfig load_hf_config_text(std::string_view text);

}  // namespace tally
