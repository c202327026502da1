#include "hf_config_read.h"

#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/model/model.h"

namespace tally::hf_read {

using json = nlohmann::json;

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

void refuse_keys_outside(const json& j, const std::string& type, std::span<const char* const> common,
                         std::initializer_list<const char*> read) {
    for (const auto& [key, value] : j.items()) {
        bool known = false;
        for (const char* k : common) known = known || key == k;
        for (const char* k : read) known = known || key == k;
        if (!known)
            throw InputError(key, "config.json field \"" + printable(key, 64) +
                                      "\" is not understood by tally for model_type " + type +
                                      "; it may change the count, so the config is refused rather than miscounted");
    }
}

}  // namespace tally::hf_read
