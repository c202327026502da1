// The readers a method reads its arguments with (default and range from the declaration) and its warnings.
#include "api_args.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tally/base/error.h"
#include "tally/base/input.h"

namespace tally::api {

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
