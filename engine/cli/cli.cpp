#include "cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "tally/api.h"
#include "tally/error.h"

namespace tally::cli {

namespace {

double parse_strict_number(const std::string& flag, const std::string& text) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (text.empty() || end != begin + text.size() || errno == ERANGE)
        throw InputError(flag, flag + " must be a number, got \"" + text + "\"");
    return value;
}

const Option* find_option(std::span<const Option> options, std::string_view flag) {
    for (const Option& option : options)
        if (flag == option.flag) return &option;
    return nullptr;
}

// Prints "tally <command>: <message> (--flag)", naming the flag the user typed when the engine names
// the API field behind it.
int report_input_error(const char* command, const InputError& error, std::span<const Option> options) {
    std::string where = error.field();
    for (const Option& option : options)
        if (where == option.key) where = option.flag;
    std::cerr << "tally " << command << ": " << error.what();
    if (!where.empty() && where != error.field()) std::cerr << " (" << where << ")";
    std::cerr << "\n";
    return kExitBadInput;
}

}  // namespace

Parsed parse_options(int argc, char** argv, int first, std::span<const Option> options) {
    Parsed parsed;
    for (int i = first; i < argc; ++i) {
        std::string flag = argv[i];
        if (flag == "--json") { parsed.json_output = true; continue; }
        if (flag == "--help" || flag == "-h") { parsed.help = true; continue; }
        std::string value;
        bool has_inline_value = false;
        if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            has_inline_value = true;
        }
        const Option* option = find_option(options, flag);
        if (option == nullptr) throw InputError(flag, "unknown option " + flag + " (see --help)");
        if (option->kind == Kind::Flag) {
            if (has_inline_value) throw InputError(flag, flag + " takes no value");
            parsed.args[option->key] = true;
            continue;
        }
        if (!has_inline_value) {
            if (i + 1 >= argc) throw InputError(flag, flag + " needs a value");
            value = argv[++i];
        }
        if (option->kind == Kind::String)
            parsed.args[option->key] = value;
        else
            parsed.args[option->key] = parse_strict_number(flag, value);
    }
    return parsed;
}

void print_usage(std::ostream& out, const char* usage, std::span<const Option> options) {
    out << usage << "\n\nOptions:\n";
    for (const Option& option : options) {
        std::string left = std::string("  ") + option.flag;
        if (option.kind == Kind::Number || option.kind == Kind::Integer) left += " X";
        if (option.kind == Kind::String) left += " NAME";
        out << left;
        for (std::size_t pad = left.size(); pad < 28; ++pad) out << ' ';
        out << ' ' << option.help << "\n";
    }
    out << "  --json                       print the result as JSON (the API's result object)\n";
}

void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows) {
    std::size_t width = 0;
    for (const auto& row : rows) width = std::max(width, row.first.size());
    for (const auto& row : rows) {
        out << "  " << row.first;
        for (std::size_t pad = row.first.size(); pad < width + 2; ++pad) out << ' ';
        out << row.second << "\n";
    }
}

std::string human_integer(unsigned long long value) {
    std::string digits = std::to_string(value);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string human(double value) {
    char buffer[64];
    const double magnitude = std::fabs(value);
    if (value == std::floor(value) && magnitude < 1e15) {
        std::string text = human_integer(static_cast<unsigned long long>(magnitude));
        if (value < 0) text.insert(text.begin(), '-');
        return text;
    }
    if (magnitude != 0 && (magnitude >= 1e6 || magnitude < 1e-3))
        std::snprintf(buffer, sizeof buffer, "%.3g", value);
    else
        std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

int run_method(const char* command, const char* method, const Parsed& parsed, std::span<const Option> options,
               void (*print_human)(std::ostream&, const nlohmann::json& result)) {
    try {
        const nlohmann::json result = api::invoke(method, parsed.args);
        if (parsed.json_output || print_human == nullptr)
            std::cout << result.dump(2) << "\n";
        else
            print_human(std::cout, result);
        return kExitOk;
    } catch (const InputError& error) {
        return report_input_error(command, error, options);
    }
}

int simple_command(int argc, char** argv, const char* command, const char* method, const char* usage,
                   std::span<const Option> options,
                   void (*print_human)(std::ostream&, const nlohmann::json& result),
                   const std::function<void(nlohmann::json& args)>& adjust) {
    Parsed parsed;
    try {
        parsed = parse_options(argc, argv, 2, options);
        if (parsed.help) {
            print_usage(std::cout, usage, options);
            return kExitOk;
        }
        if (adjust) adjust(parsed.args);
    } catch (const InputError& error) {
        return report_input_error(command, error, options);
    }
    return run_method(command, method, parsed, options, print_human);
}

}  // namespace tally::cli
