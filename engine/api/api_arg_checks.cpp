// What a method declares, checked before it runs: undeclared keys, types and static ranges, and the one rule
// for an argument given where it does not apply (applies_text, check_applies).
#include "api_args.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tally/base/error.h"
#include "tally/base/input.h"

namespace tally::api {

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

}  // namespace tally::api
