#include "tally/api.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tally/error.h"

namespace tally::api {

namespace {

std::array<std::span<const Method>, 5> all_areas() {
    return {training_methods(), accounting_methods(), precision_methods(), gemm_methods(), inference_methods()};
}

json error_object(const std::string& field, const std::string& message) {
    return json{{"ok", false}, {"error", {{"field", field}, {"message", message}}}};
}

// Strict decimal parse: the whole string must be a finite number in C syntax.
std::optional<double> parse_number_text(const std::string& text) {
    if (text.empty()) return std::nullopt;
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (end != begin + text.size() || errno == ERANGE) return std::nullopt;
    return value;
}

double to_number(const json& value, const char* field) {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
        const auto text = value.get<std::string>();
        if (auto parsed = parse_number_text(text)) return *parsed;
        throw InputError(field, std::string(field) + " must be a number, got \"" + text + "\"");
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

json invoke(std::string_view method_name, const json& args) {
    const Method* method = find_method(method_name);
    if (method == nullptr) throw InputError("method", "unknown method \"" + std::string(method_name) + "\"");
    if (!args.is_object()) throw InputError("args", "arguments must be a JSON object");
    json result = method->fn(args);
    return result;
}

std::string call(std::string_view method, std::string_view args_json) {
    try {
        json args = args_json.empty() ? json::object() : json::parse(args_json);
        return json{{"ok", true}, {"result", invoke(method, args)}}.dump();
    } catch (const InputError& error) {
        return error_object(error.field(), error.what()).dump();
    } catch (const json::parse_error& error) {
        return error_object("args", std::string("arguments are not valid JSON: ") + error.what()).dump();
    } catch (const json::exception& error) {
        return error_object("args", std::string("bad argument: ") + error.what()).dump();
    } catch (const std::exception& error) {
        return error_object("", std::string("internal error: ") + error.what()).dump();
    }
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
