// Shared helpers of the `tally` CLI: flag parsing into API arguments, tables, exit codes.
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tally/model/hf_config.h"

namespace tally::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;       // bad flag or value: the message names it
constexpr int kExitInternalError = 1;  // an engine bug (an exception other than InputError)

enum class Kind { Number, Integer, String, Flag };

struct Option {
    const char* flag;  // "--mfu"
    const char* key;   // API argument it sets: "mfu"
    Kind kind;
    const char* help;  // one line, with units and default; nullptr: the API method's declaration of `key`
};

// The CLI-only options (their help is their own): each stands for a declared argument the CLI sets another way.
// --config FILE, of every command that takes a model: fix_flags hands its contents on as `model` (a tally config
// object) or `hf_config` (a Hugging Face config.json).
inline const Option kConfigOption{"--config", "config_path", Kind::String,
                                  "path to a Hugging Face config.json (" TALLY_HF_MODEL_TYPES
                                  ") or a tally config object"};
// `dropout` defaults to the model's own, so it takes a switch each way (fix_flags makes them dropout true/false).
inline const Option kDropoutOn{"--dropout", "dropout_on", Kind::Flag,
                               "store every dropout mask (default: the model's own dropouts)"};
inline const Option kNoDropout{"--no-dropout", "no_dropout", Kind::Flag,
                               "no dropout masks (default: the model's own dropouts)"};
// `cp_load_balance` defaults to true: its switch turns it off (fix_flags: cp_load_balance false).
inline const Option kNoCpLoadBalance{"--no-cp-load-balance", "no_cp_load_balance", Kind::Flag,
                                     "cp: contiguous chunks (default: 2·cp causal load-balanced chunks, 2·cp | seq)"};

// A declared argument a command sets another way: through the options `with` (CLI-only ones, or one of another
// kind), listed in its place, or not at all (`with` empty: the command computes or searches it).
struct Replace {
    const char* key;
    std::vector<Option> with = {};
};

// A command's option table, generated from `method`'s declaration: one option per declared argument, in
// declaration order, its flag, kind and help (doc, unit, values, range, default) from the declaration. A Boolean
// that defaults to false is a switch, any other Boolean takes true|false; an Object takes no option; `replace`
// substitutes its options for an argument, in its place, and a replacement whose help is nullptr gets the
// declaration's. A new declaration becomes a flag with no CLI edit.
std::vector<Option> declared_options(const char* method, std::initializer_list<Replace> replace = {});

struct Parsed {
    nlohmann::json args = nlohmann::json::object();
    bool json_output = false;  // --json
    bool help = false;         // --help / -h
};

// Turns argv[first..] into API arguments. Unknown flags, repeated flags, missing values and values
// that are not decimal or scientific numbers (for Number/Integer options: no hex, inf or nan)
// throw InputError whose field is the flag.
Parsed parse_options(int argc, char** argv, int first, std::span<const Option> options);

// The flag that sets API argument `key` ("dollars_per_gpu_hour" -> "--price"), or `key` itself.
std::string flag_of(std::span<const Option> options, const std::string& key);
// Flag rules, checked on the parsed arguments; each throws InputError naming the user's flag.
// Both given: "--params and --model contradict each other: <why>".
void reject_together(const nlohmann::json& args, std::span<const Option> options, const char* key_a, const char* key_b,
                     const std::string& why);
// `key` given where the chosen mode ignores it: "--seq applies only <when>".
void reject_unless(const nlohmann::json& args, std::span<const Option> options, const char* key, bool applies,
                   const std::string& when);

// Largest config file read (a Hugging Face config.json is a few KiB).
constexpr long long kMaxConfigFileBytes = 1 << 20;
// Reads a config file given with `flag`: it must be a regular file (not a directory, FIFO or
// device, which could block or never end) of at most kMaxConfigFileBytes; InputError naming the
// flag and the cause otherwise.
std::string read_config_file(const std::string& path, const char* flag);

// An output file given with `flag`, opened as read_config_file opens its input, before any work is done: without
// following to a blocking open (O_NONBLOCK: a FIFO with no reader is refused at once, not waited on), and only a
// regular file is accepted (a FIFO, a device or a directory is refused, naming the flag and the cause); it is created
// if absent (mode 0644 less the umask) and truncated only when write() is called, so a refused run leaves it as it was.
class OutputFile {
public:
    OutputFile(const std::string& path, const char* flag);
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile();
    // Replaces the file's contents with `text`; InputError naming the flag when it cannot.
    void write(const std::string& text);

private:
    int fd_ = -1;
    std::string name_;  // the flag and the path, for messages
    const char* flag_;
};

// Prints result["warnings"] on stderr, one "tally <command>: warning: ..." line each.
void print_warnings(std::ostream& err, const char* command, const nlohmann::json& result,
                    std::span<const Option> options);

// Prints an input error as "tally <command>: <message>", naming the user's flag rather than the API
// field, with control characters escaped; returns kExitBadInput.
int report_input_error(const char* command, const std::string& field, const std::string& message,
                       std::span<const Option> options);

// Options whose help is nullptr print `method`'s declaration of their key: doc, unit, values, range and default.
void print_usage(std::ostream& out, const char* usage, std::span<const Option> options, const char* method = nullptr);
// The help line of API argument `key` from `method`'s declaration ("" when it declares none): doc, unit, the
// allowed values, the range and the default.
std::string declared_help(const char* method, const char* key);

// Two aligned columns.
void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows);

// Results carry seconds; the tables print days and GPU-hours.
inline constexpr double kSecondsPerDay = 86400.0;
inline constexpr double kSecondsPerHour = 3600.0;

// 6.3e+24 -> "6.30e24"; 143.93 -> "143.9"; integers under 1e15 with thousands separators.
std::string human(double value);
std::string human_integer(unsigned long long value);

// Runs an API method on parsed flags: on success prints the result as JSON (--json) or via
// `print_human`; on InputError prints "tally <command>: <message>" (naming the flag) and returns 2.
int run_method(const char* command, const char* method, const Parsed& parsed, std::span<const Option> options,
               void (*print_human)(std::ostream&, const nlohmann::json& result));

// The standard shape of a subcommand: parse, --help, `adjust` the arguments (may throw InputError), run_method.
int simple_command(int argc, char** argv, const char* command, const char* method, const char* usage,
                   std::span<const Option> options, void (*print_human)(std::ostream&, const nlohmann::json& result),
                   const std::function<void(nlohmann::json& args)>& adjust = {});

}  // namespace tally::cli
