// Shared helpers of the `tally` CLI: flag parsing into API arguments, tables, exit codes.
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;  // bad flag or value: the message names it

enum class Kind { Number, Integer, String, Flag };

struct Option {
    const char* flag;  // "--mfu"
    const char* key;   // API argument it sets: "mfu"
    Kind kind;
    const char* help;  // one line, with units and default
};

struct Parsed {
    nlohmann::json args = nlohmann::json::object();
    bool json_output = false;  // --json
    bool help = false;         // --help / -h
};

// Turns argv[first..] into API arguments. Unknown flags, missing values and values that are not
// numbers (for Number/Integer options) throw InputError whose field is the flag.
Parsed parse_options(int argc, char** argv, int first, std::span<const Option> options);

void print_usage(std::ostream& out, const char* usage, std::span<const Option> options);

// Two aligned columns.
void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows);

// 6.3e+24 -> "6.30e24"; 143.93 -> "143.9"; integers under 1e15 with thousands separators.
std::string human(double value);
std::string human_integer(unsigned long long value);

// Runs an API method on parsed flags: on success prints the result as JSON (--json) or via
// `print_human`; on InputError prints "tally <command>: <message>" (naming the flag) and returns 2.
int run_method(const char* command, const char* method, const Parsed& parsed, std::span<const Option> options,
               void (*print_human)(std::ostream&, const nlohmann::json& result));

// The standard shape of a subcommand: parse, --help, `adjust` the arguments (may throw InputError), run_method.
int simple_command(int argc, char** argv, const char* command, const char* method, const char* usage,
                   std::span<const Option> options,
                   void (*print_human)(std::ostream&, const nlohmann::json& result),
                   const std::function<void(nlohmann::json& args)>& adjust = {});

}  // namespace tally::cli
