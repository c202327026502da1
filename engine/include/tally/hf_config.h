// Hugging Face config.json -> ModelConfig, for model_type llama, mistral, qwen2, mixtral, gpt2 (decoders),
// bert, roberta (encoders) and t5 (encoder-decoder).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/model.h"

namespace tally {

// The model types load_hf_config understands, comma-separated, for messages and --help.
const char* hf_model_types();

// From a parsed config.json object. Unknown model_type, missing or ill-typed fields throw InputError
// whose field is the config.json key ("num_attention_heads").
ModelConfig load_hf_config(const nlohmann::json& config);

// From config.json text. Malformed JSON throws InputError(field "hf_config") with the byte position.
ModelConfig load_hf_config_text(std::string_view text);

}  // namespace tally
