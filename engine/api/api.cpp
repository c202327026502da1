#include "tally/api.h"

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

// The CLI flag of an argument: declared, else --<name> with '_' as '-'.
std::string flag_name(const Arg& arg) {
    if (arg.flag != nullptr) return arg.flag;
    std::string flag = std::string("--") + arg.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

}  // namespace

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

json declared_only(const json& args, std::string_view method_name) {
    const Method* method = find_method(method_name);
    if (method == nullptr || !method->declared) return args;
    json out = json::object();
    for (const Arg& arg : method->args)
        if (auto it = args.find(arg.name); it != args.end()) out[arg.name] = *it;
    return out;
}

void check_declared_args(const Method& method, const json& args) {
    if (!method.declared) return;  // a method added the old way: its readers check what they read
    // Undeclared keys first (null is an absent argument, declared or not), then each declared argument in
    // declaration order, which follows the order the method reads them, so the first error is the readers'.
    for (const auto& item : args.items()) {
        const std::string& key = item.key();  // not a structured binding: clang 14 (emscripten) cannot capture one
        if (item.value().is_null()) continue;
        const auto arg =
            std::find_if(method.args.begin(), method.args.end(), [&](const Arg& a) { return key == a.name; });
        if (arg == method.args.end()) {
            std::string accepted;
            for (const Arg& a : method.args) accepted += std::string(accepted.empty() ? "" : ", ") + a.name;
            throw InputError(printable(key, 40),
                             std::string(method.name) + " takes no argument \"" + printable(key, 40) + "\"; " +
                                 (accepted.empty() ? std::string("it takes no arguments") : "it accepts " + accepted));
        }
    }
    for (const Arg& declared : method.args) {
        const auto it = args.find(declared.name);
        if (it == args.end() || it->is_null()) continue;  // absent: the default applies
        const json& value = *it;
        const Arg* arg = &declared;
        const char* field = arg->name;
        switch (arg->type) {
            case ArgType::Integer: {
                const double number = to_number(value, field);
                // Integers with a static range are checked here, as the readers would; others by the method.
                if (std::isfinite(arg->low) && std::isfinite(arg->high))
                    require_integer(field, number, static_cast<std::int64_t>(arg->low),
                                    static_cast<std::int64_t>(arg->high));
                break;
            }
            case ArgType::Number: {
                const double number = to_number(value, field);
                // The two shapes the core's checks name: (0, inf) and (low, high]; other ranges the method checks.
                if (arg->low_open && arg->low == 0 && !std::isfinite(arg->high))
                    require_positive(field, number);
                else if (arg->low_open && std::isfinite(arg->high))
                    require_in_left_open(field, number, arg->low, arg->high);
                break;
            }
            case ArgType::Boolean: bool_arg(args, field, false); break;
            default: break;  // strings, enums, objects and arrays: the method's parser names the allowed values
        }
    }
    check_applies(method, args);
}

namespace {

const Arg* declared_arg(const Method& method, std::string_view name) {
    for (const Arg& a : method.args)
        if (name == a.name) return &a;
    return nullptr;
}

bool given(const json& args, const char* name) {
    const auto it = args.find(name);
    return it != args.end() && !it->is_null();
}

// Whether `cond` holds for `args`, and the value it tested as text ("" where there is none to show). An argument the
// method does not declare is never given; a default that depends on other arguments passes.
bool holds(const Method& method, const json& args, const Cond& cond, std::string* shown) {
    if (cond.test == Test::None) return false;
    if (cond.test == Test::Never) return false;
    if (cond.test == Test::Given) return given(args, cond.other);
    const Arg* other = declared_arg(method, cond.other);
    if (other == nullptr) return false;
    const std::string fallback = default_text(*other);
    const bool absent = !given(args, cond.other);
    if (absent && fallback.rfind("depends", 0) == 0) return true;
    if (cond.test == Test::Above) {
        double value = 0;
        if (absent) {
            char* end = nullptr;
            value = std::strtod(fallback.c_str(), &end);
            if (end == fallback.c_str() || *end != '\0') return true;  // a default that is not a number
        } else {
            value = to_number(args[cond.other], cond.other);
        }
        *shown = format_number(value);
        return value > cond.above;
    }
    std::string value = fallback;
    if (!absent) {
        const json& v = args[cond.other];
        value = v.is_string() ? v.get<std::string>() : v.dump();
    }
    // A value the other argument does not take is its own error, which its reader names: not this rule's.
    if (!absent && other->values != nullptr) {
        bool known = false;
        std::string_view all = other->values;
        while (!known) {
            const auto bar = all.find('|');
            known = all.substr(0, bar) == value;
            if (bar == std::string_view::npos) break;
            all = all.substr(bar + 1);
        }
        if (!known) return true;
    }
    *shown = value.empty() ? std::string("\"\"") : printable(value, 40);
    std::string_view rest = cond.values;
    while (true) {
        const auto bar = rest.find('|');
        if (rest.substr(0, bar) == value) return true;
        if (bar == std::string_view::npos) return false;
        rest = rest.substr(bar + 1);
    }
}

std::string cond_text(const Cond& cond) {
    switch (cond.test) {
        case Test::Given: return "`" + std::string(cond.other) + "` given";
        case Test::Above: return "`" + std::string(cond.other) + "` > " + format_number(cond.above);
        case Test::OneOf: {
            std::string values = cond.values;
            for (std::size_t at = values.find('|'); at != std::string::npos; at = values.find('|', at))
                values.replace(at, 1, " or ");
            return "`" + std::string(cond.other) + "` " + values;
        }
        default: return "";
    }
}

}  // namespace

std::string applies_text(const Arg& arg, std::string_view method) {
    const auto& [first, second] = arg.applies.any_of;
    if (first.test == Test::Never)
        return std::string("never") + (method.empty() ? "" : " in " + std::string(method)) + ": it is searched";
    if (first.test == Test::None) return "";
    std::string text = "with " + cond_text(first);
    if (second.test != Test::None) text += " or " + cond_text(second);
    return text;
}

void check_applies(const Method& method, const json& args) {
    for (const Arg& arg : method.args) {
        if (arg.applies.always() || !given(args, arg.name)) continue;
        const auto& conds = arg.applies.any_of;
        if (conds[0].test == Test::Never)
            throw InputError(arg.name, std::string(arg.name) + " is not an argument of " + method.name +
                                           ": it searches " + arg.name + " itself (see its layouts)");
        std::string shown[2], why;
        bool ok = false;
        for (std::size_t i = 0; i < conds.size(); ++i) ok = ok || holds(method, args, conds[i], &shown[i]);
        if (ok) continue;
        for (std::size_t i = 0; i < conds.size(); ++i)
            if (!shown[i].empty())
                why += std::string(why.empty() ? "" : ", ") + "`" + conds[i].other + "` is " + shown[i];
        throw InputError(arg.name, std::string(arg.name) + " applies only " + applies_text(arg, method.name) +
                                       (why.empty() ? "" : " (here " + why + ")") + "; leave it out");
    }
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

namespace {

double fallback_number(const Arg& arg) {
    if (*arg.fallback == '\0' && std::isfinite(arg.constant)) return arg.constant;
    char* end = nullptr;
    const double value = std::strtod(arg.fallback, &end);
    // A declaration whose default is not a number ("depends: ...") needs the overload with a fallback.
    if (end == arg.fallback || *end != '\0')
        throw std::logic_error(std::string("declaration of ") + arg.name + " has no numeric default");
    return value;
}

std::int64_t low_of(const Arg& arg) {
    return std::isfinite(arg.low) ? static_cast<std::int64_t>(arg.low) : std::numeric_limits<std::int64_t>::min();
}
std::int64_t high_of(const Arg& arg) {
    return std::isfinite(arg.high) ? static_cast<std::int64_t>(arg.high) : std::numeric_limits<std::int64_t>::max();
}

}  // namespace

std::optional<std::int64_t> optional_arg_int(const json& args, const Arg& arg) {
    return optional_integer_arg(args, arg.name, low_of(arg), high_of(arg));
}

std::int64_t arg_int(const json& args, const Arg& arg, std::int64_t fallback) {
    return optional_arg_int(args, arg).value_or(fallback);
}

std::int64_t arg_int(const json& args, const Arg& arg) {
    if (std::string_view(arg.fallback) == "required") return integer_arg(args, arg.name, low_of(arg), high_of(arg));
    return arg_int(args, arg, static_cast<std::int64_t>(fallback_number(arg)));
}

double arg_number(const json& args, const Arg& arg) {
    if (std::string_view(arg.fallback) == "required") return number_arg(args, arg.name);
    return optional_number_arg(args, arg.name).value_or(fallback_number(arg));
}

bool arg_bool(const json& args, const Arg& arg) {
    return bool_arg(args, arg.name, std::string_view(arg.fallback) == "true");
}

std::string arg_string(const json& args, const Arg& arg) {
    if (std::string_view(arg.fallback) == "required") return string_arg(args, arg.name);
    return optional_string_arg(args, arg.name).value_or(arg.fallback);
}

std::optional<std::string> optional_string_arg(const json& args, const char* field) {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw InputError(field, std::string(field) + " must be a string");
    return it->get<std::string>();
}

}  // namespace tally::api
