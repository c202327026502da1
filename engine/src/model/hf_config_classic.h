// Private to engine/src/model: config.json loaders for the older and mid-2024 model types (Gemma 1, Granite 3,
// Qwen1.5/2-MoE, DeepSeek-V2, GPT-NeoX/Pythia, StarCoder2). hf_config.cpp dispatches to them. Where a type counts
// as an existing loader's, its function checks the type's own keys and returns the config.json that loader reads.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tally/model/model.h"

namespace tally::hf_classic {

// GemmaConfig: Llama's count with GeGLU, head_dim 256 and tied embeddings by default; for load_llama_like.
nlohmann::json gemma_as_llama(const nlohmann::json& j);
// GraniteConfig: Llama's count; its four multipliers scale activations and change no parameter.
nlohmann::json granite_as_llama(const nlohmann::json& j);
// InternLM2Config (remote code): Llama's count; its one `bias` key covers the fused wqkv and wo.
nlohmann::json internlm2_as_llama(const nlohmann::json& j);
// Qwen2MoeConfig: Qwen2's attention (for load_llama_like as qwen2), then with_qwen2_moe adds its MoE blocks.
nlohmann::json qwen2_moe_as_qwen2(const nlohmann::json& j);
ModelConfig with_qwen2_moe(const nlohmann::json& j, ModelConfig dense);
// OlmoeConfig: Llama's attention (for load_llama_like as olmoe), then with_olmoe adds OLMo's whole-projection
// q_norm / k_norm and the MoE blocks.
nlohmann::json olmoe_as_llama(const nlohmann::json& j);
ModelConfig with_olmoe(const nlohmann::json& j, ModelConfig dense);
// DeepseekV2Config: DeepSeek-V3's MLA and MoE without the router's correction bias and MTP; for load_deepseek_v3.
nlohmann::json deepseek_v2_as_v3(const nlohmann::json& j);
// GPTNeoXConfig (Pythia, GPT-NeoX-20B) and Starcoder2Config: LayerNorm with bias, a two-matrix MLP, biases.
ModelConfig load_gpt_neox(const nlohmann::json& j);
ModelConfig load_starcoder2(const nlohmann::json& j);

}  // namespace tally::hf_classic
