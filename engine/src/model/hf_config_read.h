// Private to engine/src/model: reading config.json keys, shared by the loaders (hf_config.cpp,
// hf_config_classic.cpp). Every error names the HF key, and a refusal names the model type.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace tally::hf_read {

// A required integer key in [low, high].
std::int64_t hf_int(const nlohmann::json& config, const char* key, const std::string& type, std::int64_t low,
                    std::int64_t high);
// An integer key in [low, high], `fallback` when absent or null.
std::int64_t hf_int_or(const nlohmann::json& config, const char* key, std::int64_t fallback, std::int64_t low,
                       std::int64_t high);
bool hf_bool_or(const nlohmann::json& config, const char* key, bool fallback);
// A dropout probability in [0, 1); absent takes the transformers class default.
double hf_probability_or(const nlohmann::json& config, const char* key, double fallback);
std::string hf_string_or(const nlohmann::json& config, const char* key, const char* fallback);
// Refuses the first key that is neither in `common` nor one the loader for `type` reads: it might change the count.
void refuse_keys_outside(const nlohmann::json& j, const std::string& type, std::span<const char* const> common,
                         std::initializer_list<const char*> read);

}  // namespace tally::hf_read
