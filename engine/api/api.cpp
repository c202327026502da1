#include "tally/api.h"

#include "api_args.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <new>
#include <utility>
#include <vector>

#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/base/json_members.h"
#include "tally/model/model.h"

namespace tally::api {

namespace {

json methods(const json& args) { return list_methods(bool_arg(args, "detail", false)); }

constexpr std::array kMethodsArgs{
    arg::boolean("detail", "false", "also list each method's declared arguments and result fields")};
constexpr std::array kMethodsResult = std::to_array<Field>({
    {"name", "", "the method's name"},
    {"summary", "", "one line"},
    {"declared", "", "with detail: whether the method declares its arguments"},
    {"args", "", "with detail: {name, type, unit, low, high, default, doc, flag, values} per argument"},
    {"result", "", "with detail: {name, unit, doc} per top-level result field"},
});

constexpr Method kApiMethods[] = {
    {"methods", methods, "list every API method", kMethodsArgs, kMethodsResult, true},
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
// The dotted path of the first non-finite number under `value` ("" at the top), or nullopt when every number is
// finite. The path is built only on the way back from a hit: building it at every node cost a sixth of a call.
std::optional<std::string> first_non_finite(const json& value) {
    if (value.is_number_float())
        return std::isfinite(value.get<double>()) ? std::nullopt : std::optional<std::string>("");
    if (value.is_object())
        for (const auto& [key, item] : value.items())
            if (auto rest = first_non_finite(item))
                return rest->empty() || rest->front() == '[' ? key + *rest : key + "." + *rest;
    if (value.is_array())
        for (std::size_t i = 0; i < value.size(); ++i)
            if (auto rest = first_non_finite(value[i]))
                return "[" + std::to_string(i) + "]" + (rest->empty() || rest->front() == '[' ? *rest : "." + *rest);
    return std::nullopt;
}

void require_finite_result(const json& value, const json& args) {
    const auto path = first_non_finite(value);
    if (!path) return;
    // The value itself (inf or nan) means nothing to a reader; the input behind it does.
    std::string message = "the result " + *path + " overflows or is undefined: the inputs are out of range";
    if (auto culprit = most_extreme_number(args)) {
        message += "; the most extreme is " + culprit->first + " = " + format_number(culprit->second);
        throw InputError(culprit->first, message);
    }
    throw InputError("args", message);
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

}  // namespace

const Method* find_method(std::string_view name) {
    for (auto area : all_areas())
        for (const Method& method : area)
            if (name == method.name) return &method;
    return nullptr;
}

namespace {

const char* type_name(ArgType type) {
    switch (type) {
        case ArgType::Integer: return "integer";
        case ArgType::Number: return "number";
        case ArgType::Boolean: return "boolean";
        case ArgType::String: return "string";
        case ArgType::Enum: return "enum";
        case ArgType::Object: return "object";
        case ArgType::Array: return "array";
        case ArgType::Any: return "any";
    }
    return "any";
}

}  // namespace

std::string flag_name(const Arg& arg) {
    if (arg.flag != nullptr) return arg.flag;
    std::string flag = std::string("--") + arg.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

std::string default_text(const Arg& arg) {
    if (*arg.fallback != '\0' || !std::isfinite(arg.constant)) return arg.fallback;
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", arg.constant);
    return text;
}

json arg_to_json(const Arg& arg) {
    json out{{"name", arg.name}, {"type", type_name(arg.type)}, {"unit", arg.unit}};
    if (std::isfinite(arg.low)) out["low"] = arg.low;
    if (std::isfinite(arg.high)) out["high"] = arg.high;
    if (arg.low_open) out["low_open"] = true;
    out["default"] = default_text(arg);
    out["doc"] = arg.doc;
    out["flag"] = flag_name(arg);
    if (!arg.applies.always()) out["applies"] = applies_text(arg, "");
    if (arg.values != nullptr) {
        json values = json::array();
        std::string_view rest = arg.values;
        while (!rest.empty()) {
            const auto bar = rest.find('|');
            values.push_back(std::string(rest.substr(0, bar)));
            rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
        }
        out["values"] = values;
    }
    return out;
}

json list_methods(bool detail) {
    json out = json::array();
    for (auto area : all_areas())
        for (const Method& method : area) {
            json row{{"name", method.name}, {"summary", method.summary}};
            if (detail) {
                row["declared"] = method.declared;
                json args = json::array();
                for (const Arg& arg : method.args) args.push_back(arg_to_json(arg));
                json result = json::array();
                for (const Field& field : method.result) result.push_back(TALLY_MEMBERS(field, name, unit, doc));
                row["args"] = args;
                row["result"] = result;
            }
            out.push_back(row);
        }
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
    check_declared_args(*method, args);
    json result;
    try {
        result = method->fn(args);
    } catch (const InputError& error) {
        // A count past 64 bits names the quantity that overflowed ("memory"), which no caller gave: the error names
        // the input furthest from 1 in magnitude instead, as a non-finite result does (require_finite_result).
        const std::string message = error.what();
        const bool declared = std::any_of(method->args.begin(), method->args.end(),
                                          [&](const Arg& a) { return error.field() == a.name; });
        if (declared || message.find("overflows a 64-bit count") == std::string::npos) throw;
        if (auto culprit = most_extreme_number(args))
            throw InputError(culprit->first, message + "; the most extreme is " + culprit->first + " = " +
                                                 format_number(culprit->second));
        throw;
    }
    require_finite_result(result, args);
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

}  // namespace tally::api
