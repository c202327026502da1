// Shared helpers of the accounting tests (model, params, flops, memory, fit, kv cache).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tally/api.h"
#include "tally/error.h"
#include "tally/model.h"
#include "tally/presets.h"

namespace tally_test {

inline tally::ModelConfig preset(const std::string& id) { return tally::resolve_model(nlohmann::json{{"model", id}}); }

// The InputError fn throws, or nullopt when it throws none.
inline std::optional<tally::InputError> input_error(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const tally::InputError& error) {
        return error;
    }
    return std::nullopt;
}

// The field an InputError names, or "" when fn does not throw one.
inline std::string error_field(const std::function<void()>& fn) {
    const auto error = input_error(fn);
    return error ? error->field() : "";
}

// The message of the InputError fn throws, or "" when it throws none.
inline std::string error_message(const std::function<void()>& fn) {
    const auto error = input_error(fn);
    return error ? error->what() : "";
}

}  // namespace tally_test
