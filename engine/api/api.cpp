#include "tally/api.h"

#include <array>
#include <cmath>
#include <new>
#include <utility>
#include <vector>

#include "tally/error.h"
#include "tally/input.h"
#include "tally/model.h"

namespace tally::api {

namespace {

json methods(const json&) { return list_methods(); }

constexpr Method kApiMethods[] = {
    {"methods", methods, "list every API method"},
};

std::array<std::span<const Method>, 23> all_areas() {
    return {kApiMethods,         presets_methods(),    params_methods(),   flops_methods(),       training_methods(),
            memory_methods(),    finetune_methods(),   fit_methods(),      kvcache_methods(),     tensor_methods(),
            precision_methods(), blockscale_methods(), gemm_methods(),     roofline_methods(),    probe_methods(),
            step_methods(),      inference_methods(),  schedule_methods(), collectives_methods(), overlap_methods(),
            moe_methods(),       context_methods(),    goodput_methods()};
}

// Every envelope is serialised with invalid UTF-8 replaced (U+FFFD), so dumping cannot throw.
std::string dump_safely(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string error_envelope(const std::string& field, const std::string& message) {
    return dump_safely(
        json{{"ok", false},
             {"error", {{"field", printable(field, kMaxMethodNameBytes)}, {"message", printable_message(message)}}}});
}

// The input whose number is furthest from 1 in order of magnitude: when a result overflows or
// underflows to a non-finite value, it is the likeliest cause. Numbers inside an array argument
// ("values": [1e308, ...]) count for that argument, so the field named is always one the caller gave.
std::optional<std::pair<std::string, double>> most_extreme_number(const json& args) {
    std::optional<std::pair<std::string, double>> best;
    double best_score = -1;
    const auto consider = [&](const std::string& key, const json& value) {
        std::optional<double> number;
        if (value.is_number())
            number = value.get<double>();
        else if (value.is_string())
            number = parse_decimal(value.get<std::string>());
        if (!number || *number == 0 || !std::isfinite(*number)) return;
        const double score = std::fabs(std::log10(std::fabs(*number)));
        if (score > best_score) {
            best_score = score;
            best = std::make_pair(key, *number);
        }
    };
    for (const auto& [key, value] : args.items()) {
        if (value.is_array())
            for (const auto& item : value) consider(key, item);
        else
            consider(key, value);
    }
    return best;
}

// Safety net under every method: a result number that is inf or NaN (which JSON would print as
// null) becomes an input error instead of a success.
void require_finite_result(const json& value, const std::string& path, const json& args) {
    if (value.is_number_float() && !std::isfinite(value.get<double>())) {
        // The value itself (inf or nan) means nothing to a reader; the input behind it does.
        std::string message = "the result " + path + " overflows or is undefined: the inputs are out of range";
        if (auto culprit = most_extreme_number(args)) {
            message += "; the most extreme is " + culprit->first + " = " + format_number(culprit->second);
            throw InputError(culprit->first, message);
        }
        throw InputError("args", message);
    }
    if (value.is_object())
        for (const auto& [key, item] : value.items())
            require_finite_result(item, path.empty() ? key : path + "." + key, args);
    if (value.is_array())
        for (std::size_t i = 0; i < value.size(); ++i)
            require_finite_result(value[i], path + "[" + std::to_string(i) + "]", args);
}

std::string call_unguarded(std::string_view method, std::string_view args_json) {
    try {
        // Quotes only the first 40 bytes, without the total length, so that the wasm glue can copy a bounded
        // prefix of a huge name (engine/bindings/post.js) and get this same message.
        if (method.size() > kMaxMethodNameBytes) {
            std::size_t cut = 40;
            while (cut > 0 && (static_cast<unsigned char>(method[cut]) & 0xC0) == 0x80) --cut;
            throw InputError("method", "method must be the name of an API method (see `methods`), at most " +
                                           std::to_string(kMaxMethodNameBytes) + " bytes, got \"" +
                                           printable(method.substr(0, cut), 40) + "...\"");
        }
        if (find_invalid_utf8(method))
            throw InputError("method", "method must be the name of an API method (see `methods`), got \"" +
                                           printable(method, 40) + "\"");
        json args = args_json.empty() ? json::object() : parse_json_input(args_json, "args", "the argument text");
        return dump_safely(json{{"ok", true}, {"result", invoke(method, args)}});
    } catch (const InputError& error) {
        return error_envelope(error.field(), error.what());
    } catch (const std::bad_alloc&) {
        return error_envelope("args", "out of memory: the arguments ask for more than this engine can hold");
    } catch (const json::exception& error) {
        return error_envelope("args", std::string("bad argument: ") + error.what());
    } catch (const std::exception& error) {
        return error_envelope("", std::string("internal error: ") + error.what());
    }
}

double to_number(const json& value, const char* field) {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
        const auto text = value.get<std::string>();
        if (auto parsed = parse_decimal(text)) return *parsed;
        throw InputError(field, std::string(field) +
                                    " must be a finite number in decimal or scientific notation, got \"" +
                                    printable(text, 40) + "\"");
    }
    throw InputError(field, std::string(field) + " must be a number, got " + std::string(value.type_name()));
}

}  // namespace

const Method* find_method(std::string_view name) {
    for (auto area : all_areas())
        for (const Method& method : area)
            if (name == method.name) return &method;
    return nullptr;
}

json list_methods() {
    json out = json::array();
    for (auto area : all_areas())
        for (const Method& method : area) out.push_back({{"name", method.name}, {"summary", method.summary}});
    return out;
}

namespace {

// A sequence past a model's learned position embeddings (GPT-2's 1,024) has no embedding there: the counts are
// legal arithmetic but describe a model that cannot run, so every method that takes a length says so.
void warn_past_learned_positions(const json& args, json& result) {
    if (!result.is_object() || !(args.contains("model") || args.contains("hf_config"))) return;
    std::vector<std::pair<const char*, double>> lengths;
    for (const char* field : {"seq", "context", "decoder_seq"}) {
        auto it = args.find(field);
        if (it != args.end() && it->is_number()) lengths.emplace_back(field, it->get<double>());
    }
    if (lengths.empty()) return;
    ModelConfig c;
    try {
        c = resolve_model(args);
    } catch (const InputError&) {
        return;  // the method accepted its arguments another way (a model field of its own)
    }
    if (c.position != PositionKind::Learned || c.max_positions <= 0) return;
    for (const auto& [field, length] : lengths)
        if (length > static_cast<double>(c.max_positions))
            add_warning(result, field,
                        std::string(field) + " = " + format_number(length) + " is past the " +
                            std::to_string(c.max_positions) + " learned positions (max_positions) of " + c.name +
                            ": it has no position embedding beyond them, so these counts are for a "
                            "model that cannot run at this length");
}

}  // namespace

json invoke(std::string_view method_name, const json& args) {
    const Method* method = find_method(method_name);
    if (method == nullptr)
        throw InputError("method", "unknown method \"" + printable(method_name, 40) + "\" (see `methods`)");
    if (!args.is_object()) throw InputError("args", "the arguments must be a JSON object");
    json result = method->fn(args);
    require_finite_result(result, "", args);
    warn_past_learned_positions(args, result);
    return result;
}

std::string call(std::string_view method, std::string_view args_json) {
    try {
        return call_unguarded(method, args_json);
    } catch (...) {
        // Only reachable if building the error envelope itself fails (out of memory).
        return R"({"ok":false,"error":{"field":"","message":"internal error"}})";
    }
}

void add_warning(json& result, const std::string& field, const std::string& message) {
    if (!result.contains("warnings")) result["warnings"] = json::array();
    result["warnings"].push_back({{"field", field}, {"message", printable_message(message)}});
}

double number_arg(const json& args, const char* field) {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) throw InputError(field, std::string(field) + " is required");
    return to_number(*it, field);
}

std::optional<double> optional_number_arg(const json& args, const char* field) {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return std::nullopt;
    return to_number(*it, field);
}

std::int64_t integer_arg(const json& args, const char* field, std::int64_t low, std::int64_t high) {
    return require_integer(field, number_arg(args, field), low, high);
}

std::optional<std::int64_t> optional_integer_arg(const json& args, const char* field, std::int64_t low,
                                                 std::int64_t high) {
    auto value = optional_number_arg(args, field);
    if (!value) return std::nullopt;
    return require_integer(field, *value, low, high);
}

bool bool_arg(const json& args, const char* field, bool fallback) {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return fallback;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_string()) {
        const auto text = it->get<std::string>();
        if (text == "true" || text == "1") return true;
        if (text == "false" || text == "0") return false;
    }
    throw InputError(field, std::string(field) + " must be true or false");
}

std::string string_arg(const json& args, const char* field) {
    auto value = optional_string_arg(args, field);
    if (!value) throw InputError(field, std::string(field) + " is required");
    return *value;
}

std::optional<std::string> optional_string_arg(const json& args, const char* field) {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw InputError(field, std::string(field) + " must be a string");
    return it->get<std::string>();
}

}  // namespace tally::api
