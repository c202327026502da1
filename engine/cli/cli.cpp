#include "cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <iostream>
#include <set>
#include <string_view>
#include <utility>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"

namespace tally::cli {

namespace {

const Option* find_option(std::span<const Option> options, std::string_view flag) {
    for (const Option& option : options)
        if (flag == option.flag) return &option;
    return nullptr;
}

bool has_key(std::span<const Option> options, std::string_view key) {
    for (const Option& option : options)
        if (key == option.key) return true;
    return false;
}

// The engine's message in the user's words: a message that starts with the field gets the flag
// instead ("mfu must be ..." -> "--mfu must be ..."), and API names with an underscore anywhere in it
// become their flags ("peak_flops_per_s" -> "--peak-flops"); plain words inside prose are left alone.
std::string in_flag_terms(std::string message, const std::string& field, std::span<const Option> options) {
    const std::string flag = flag_of(options, field);
    if (!field.empty() && flag != field && message.rfind(field, 0) == 0 &&
        (message.size() == field.size() || message[field.size()] == ' '))
        message = flag + message.substr(field.size());
    const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    // mfu "predicted" is a flag of its own where the command has one (tally time --predict-mfu).
    const std::string predicted = "`mfu` predicted";
    if (flag_of(options, "predict_mfu") == "--predict-mfu")
        for (std::size_t at = message.find(predicted); at != std::string::npos; at = message.find(predicted, at))
            message.replace(at, predicted.size(), "--predict-mfu");
    // A name the engine quotes (`pp`, as the "applies only" rule writes the others it tests) becomes its flag, or
    // loses its quotes where the command has no flag for it.
    for (std::size_t open = message.find('`'); open != std::string::npos; open = message.find('`', open)) {
        const std::size_t close = message.find('`', open + 1);
        if (close == std::string::npos) break;
        const std::string name = message.substr(open + 1, close - open - 1);
        const std::string flag = flag_of(options, name);
        message.replace(open, close - open + 1, flag);
        open += flag.size();
    }
    for (const Option& option : options) {
        const std::string key = option.key;
        if (key.find('_') == std::string::npos) continue;
        for (std::size_t at = message.find(key); at != std::string::npos; at = message.find(key, at)) {
            const bool starts = at == 0 || !word_char(message[at - 1]);
            const bool ends = at + key.size() == message.size() || !word_char(message[at + key.size()]);
            if (starts && ends) {
                message.replace(at, key.size(), option.flag);
                at += std::string_view(option.flag).size();
            } else {
                at += key.size();
            }
        }
    }
    return message;
}

}  // namespace

std::string flag_of(std::span<const Option> options, const std::string& key) {
    for (const Option& option : options)
        if (key == option.key) return option.flag;
    // A negative switch (--no-cp-load-balance) stands for the argument it sets false.
    for (const Option& option : options)
        if ("no_" + key == option.key) return option.flag;
    // A config file's contents reach the engine as hf_config or model.
    if ((key == "hf_config" || key == "config_path") && has_key(options, "config_path")) return "--config";
    return key;
}

int report_input_error(const char* command, const std::string& field, const std::string& message,
                       std::span<const Option> options) {
    std::string text = in_flag_terms(message, field, options);
    const std::string where = flag_of(options, field);
    if (!field.empty() && where != field && text.find(where) == std::string::npos) text += " (" + where + ")";
    std::cerr << "tally " << command << ": " << printable_message(text) << "\n";
    return kExitBadInput;
}

Parsed parse_options(int argc, char** argv, int first, std::span<const Option> options) {
    Parsed parsed;
    std::set<std::string> seen;
    for (int i = first; i < argc; ++i) {
        std::string flag = argv[i];
        std::string value;
        bool has_inline_value = false;
        if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            has_inline_value = true;
        }
        const std::string shown = printable(flag, 40);
        const bool is_json = flag == "--json", is_help = flag == "--help" || flag == "-h";
        const Option* option = is_json || is_help ? nullptr : find_option(options, flag);
        if (option == nullptr && !is_json && !is_help)
            throw InputError(shown, "unknown option " + shown + " (see --help)");
        if (!seen.insert(is_help ? "--help" : flag).second)
            throw InputError(shown, shown + " is given twice; give each option once");
        if ((is_json || is_help || option->kind == Kind::Flag) && has_inline_value)
            throw InputError(shown, shown + " takes no value");
        if (is_json) {
            parsed.json_output = true;
            continue;
        }
        if (is_help) {
            parsed.help = true;
            continue;
        }
        if (option->kind == Kind::Flag) {
            parsed.args[option->key] = true;
            continue;
        }
        if (!has_inline_value) {
            // "--model --json": the next word is an option, so the value is missing
            if (i + 1 >= argc || std::string_view(argv[i + 1]).rfind("--", 0) == 0)
                throw InputError(shown, shown + " needs a value");
            value = argv[++i];
        }
        if (value.empty()) throw InputError(shown, shown + " needs a value, got an empty one");
        if (option->kind == Kind::String) {
            // --hardware FILE.json: a device in the preset format (a calibration file from calibrate-gpu.sh).
            if (std::string_view(option->key) == "hardware" && value.size() > 5 && value.ends_with(".json")) {
                nlohmann::json device = nlohmann::json::parse(read_config_file(value, "--hardware"), nullptr, false);
                if (device.is_discarded() || !device.is_object())
                    throw InputError("--hardware", "--hardware \"" + printable(value, 200) +
                                                       "\" is not a JSON object in the hardware preset format");
                parsed.args["hardware"] = std::move(device);
                continue;
            }
            parsed.args[option->key] = value;
            continue;
        }
        const auto number = parse_decimal(value);
        if (!number)
            throw InputError(shown,
                             shown + " must be a finite number in decimal or scientific notation (e.g. 70e9), got \"" +
                                 printable(value, 40) + "\"");
        parsed.args[option->key] = *number;
    }
    return parsed;
}

void reject_together(const nlohmann::json& args, std::span<const Option> options, const char* key_a, const char* key_b,
                     const std::string& why) {
    if (args.contains(key_a) && args.contains(key_b))
        throw InputError(flag_of(options, key_a), flag_of(options, key_a) + " and " + flag_of(options, key_b) +
                                                      " contradict each other: " + why);
}

void reject_unless(const nlohmann::json& args, std::span<const Option> options, const char* key, bool applies,
                   const std::string& when) {
    if (args.contains(key) && !applies)
        throw InputError(flag_of(options, key), flag_of(options, key) + " applies only " + when);
}

std::string read_config_file(const std::string& path, const char* flag) {
    const std::string name = std::string(flag) + " \"" + printable(path, 200) + "\"";
    if (path.empty()) throw InputError(flag, std::string(flag) + " needs a file path, got an empty one");
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected just below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT) throw InputError(flag, name + " does not exist");
        if (error == EACCES) throw InputError(flag, name + " cannot be read: permission denied");
        throw InputError(flag, name + " cannot be opened: " + std::strerror(error));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw InputError(flag, name + " cannot be read: " + std::strerror(errno));
    if (S_ISDIR(info.st_mode)) throw InputError(flag, name + " is a directory, not a config file");
    if (S_ISFIFO(info.st_mode)) throw InputError(flag, name + " is a FIFO (named pipe), not a regular file");
    if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode))
        throw InputError(flag, name + " is a device, not a regular file");
    if (!S_ISREG(info.st_mode)) throw InputError(flag, name + " is not a regular file");
    const std::string too_large = name + " is larger than the limit of " + std::to_string(kMaxConfigFileBytes) +
                                  " bytes (1 MiB); a config.json is a few KiB";
    if (info.st_size > kMaxConfigFileBytes) throw InputError(flag, too_large);
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const int error = errno;
            if (error == EISDIR) throw InputError(flag, name + " is a directory, not a config file");
            throw InputError(flag, name + " cannot be read: " + std::strerror(error));
        }
        if (got == 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > static_cast<std::size_t>(kMaxConfigFileBytes)) throw InputError(flag, too_large);  // grew
    }
    return text;
}

OutputFile::OutputFile(const std::string& path, const char* flag) : flag_(flag) {
    name_ = std::string(flag) + " \"" + printable(path, 200) + "\"";
    if (path.empty()) throw InputError(flag, std::string(flag) + " needs a file path, got an empty one");
    // No O_TRUNC: a file refused below (a device) is not touched. O_NONBLOCK: a FIFO without a reader fails with
    // ENXIO instead of waiting for one; with a reader it opens and fstat refuses it.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd_ < 0) {
        const int error = errno;
        if (error == ENXIO) throw InputError(flag, name_ + " is a FIFO (named pipe) or socket, not a regular file");
        if (error == EISDIR) throw InputError(flag, name_ + " is a directory, not a file to write");
        if (error == ENOENT) throw InputError(flag, name_ + " cannot be created: its folder does not exist");
        if (error == EACCES) throw InputError(flag, name_ + " cannot be written: permission denied");
        throw InputError(flag, name_ + " cannot be opened for writing: " + std::strerror(error));
    }
    struct stat info {};
    std::string refused;
    if (::fstat(fd_, &info) != 0)
        refused = name_ + " cannot be written: " + std::strerror(errno);
    else if (S_ISFIFO(info.st_mode))
        refused = name_ + " is a FIFO (named pipe), not a regular file";
    else if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode))
        refused = name_ + " is a device, not a regular file";
    else if (!S_ISREG(info.st_mode))
        refused = name_ + " is not a regular file";
    if (!refused.empty()) {
        ::close(fd_);
        fd_ = -1;
        throw InputError(flag, refused);
    }
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(const std::string& text) {
    const auto fail = [&] { return InputError(flag_, name_ + " cannot be written: " + std::strerror(errno)); };
    if (::ftruncate(fd_, 0) != 0) throw fail();
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t wrote = ::write(fd_, text.data() + done, text.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote < 0) throw fail();
        done += static_cast<std::size_t>(wrote);
    }
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw fail();
}

void print_warnings(std::ostream& err, const char* command, const nlohmann::json& result,
                    std::span<const Option> options) {
    if (!result.is_object() || !result.contains("warnings")) return;
    for (const auto& warning : result["warnings"])
        err << "tally " << command << ": warning: "
            << printable_message(in_flag_terms(warning.value("message", ""), warning.value("field", ""), options))
            << "\n";
}

namespace {

// "in [1, 1,024]", "in (0, 1]", "above 0", "at least 1" or "" from a declaration's static range.
std::string range_text(const api::Arg& arg) {
    if (arg.type != api::ArgType::Integer && arg.type != api::ArgType::Number) return "";
    // A bound beyond 1e18 only guards against overflow: the help leaves it out.
    const bool low = std::isfinite(arg.low), high = std::isfinite(arg.high) && arg.high <= 1e18;
    if (low && high)
        return std::string("in ") + (arg.low_open ? "(" : "[") + human(arg.low) + ", " + human(arg.high) + "]";
    if (low) return (arg.low_open ? "above " : "at least ") + human(arg.low);
    if (high) return "at most " + human(arg.high);
    return "";
}

// A Boolean that defaults to false is a switch; any other takes true or false as text.
bool switch_only(const api::Arg& arg) { return std::string_view(arg.fallback) == "false"; }

std::string help_of(const api::Arg& arg) {
    std::string help = arg.doc;
    if (*arg.unit != '\0') help += std::string(" (") + arg.unit + ")";
    if (arg.values != nullptr) help += std::string(": ") + arg.values;
    if (arg.type == api::ArgType::Boolean && !switch_only(arg)) help += ": true|false";
    if (const std::string range = range_text(arg); !range.empty()) help += ", " + range;
    if (!arg.applies.always()) {
        // The API's words with the quoted names as flags (--<name>, '_' as '-'), as the help has no option table.
        std::string when = api::applies_text(arg, "");
        for (std::size_t open = when.find('`'); open != std::string::npos; open = when.find('`', open)) {
            const std::size_t close = when.find('`', open + 1);
            if (close == std::string::npos) break;
            std::string flag = "--" + when.substr(open + 1, close - open - 1);
            std::replace(flag.begin(), flag.end(), '_', '-');
            when.replace(open, close - open + 1, flag);
            open += flag.size();
        }
        help += "; only " + when;
    }
    const std::string fallback_text = api::default_text(arg);
    const std::string_view fallback = fallback_text;
    if (fallback == "required")
        help += " (required)";
    else if (fallback.rfind("depends: ", 0) == 0)
        help += " (default: " + std::string(fallback.substr(9)) + ")";
    else if (!fallback.empty() && fallback != "none")
        help += " (default " + std::string(fallback) + ")";
    return help;
}

// Generated flags and help lines live as long as the program (the option tables are built once per command).
const char* keep(std::string text) {
    static std::deque<std::string> kept;
    return kept.emplace_back(std::move(text)).c_str();
}

}  // namespace

std::string declared_help(const char* method, const char* key) {
    const api::Method* m = method == nullptr ? nullptr : api::find_method(method);
    if (m == nullptr) return "";
    for (const api::Arg& arg : m->args)
        if (std::string_view(arg.name) == key) return help_of(arg);
    return "";
}

std::vector<Option> declared_options(const char* method, std::initializer_list<Replace> replace) {
    const api::Method* m = api::find_method(method);
    if (m == nullptr) throw std::logic_error(std::string("declared_options: no method ") + method);
    std::vector<Option> out;
    for (const api::Arg& arg : m->args) {
        const auto replaced = std::find_if(replace.begin(), replace.end(),
                                           [&](const Replace& r) { return std::string_view(r.key) == arg.name; });
        if (replaced != replace.end()) {
            for (Option option : replaced->with) {
                if (option.help == nullptr) option.help = keep(declared_help(method, option.key));
                out.push_back(option);
            }
            continue;
        }
        Kind kind = Kind::String;  // String, Enum, Array (comma-separated text) and Any (a preset id or text)
        if (arg.type == api::ArgType::Integer) kind = Kind::Integer;
        if (arg.type == api::ArgType::Number) kind = Kind::Number;
        if (arg.type == api::ArgType::Boolean && switch_only(arg)) kind = Kind::Flag;
        if (arg.type == api::ArgType::Object) continue;
        out.push_back({keep(api::flag_name(arg)), arg.name, kind, keep(help_of(arg))});
    }
    for (const Replace& r : replace)
        if (std::none_of(m->args.begin(), m->args.end(),
                         [&](const api::Arg& a) { return std::string_view(a.name) == r.key; }))
            throw std::logic_error(std::string("declared_options: ") + method + " declares no " + r.key);
    return out;
}

void print_usage(std::ostream& out, const char* usage, std::span<const Option> options, const char* method) {
    out << usage << "\n\nOptions:\n";
    for (const Option& option : options) {
        std::string left = std::string("  ") + option.flag;
        if (option.kind == Kind::Number || option.kind == Kind::Integer) left += " X";
        if (option.kind == Kind::String) left += " NAME";
        out << left;
        for (std::size_t pad = left.size(); pad < 28; ++pad) out << ' ';
        out << ' ' << (option.help != nullptr ? std::string(option.help) : declared_help(method, option.key)) << "\n";
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
        print_warnings(std::cerr, command, result, options);
        if (parsed.json_output || print_human == nullptr)
            std::cout << result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        else
            print_human(std::cout, result);
        return kExitOk;
    } catch (const InputError& error) {
        return report_input_error(command, error.field(), error.what(), options);
    }
}

int simple_command(int argc, char** argv, const char* command, const char* method, const char* usage,
                   std::span<const Option> options, void (*print_human)(std::ostream&, const nlohmann::json& result),
                   const std::function<void(nlohmann::json& args)>& adjust) {
    Parsed parsed;
    try {
        parsed = parse_options(argc, argv, 2, options);
        if (parsed.help) {
            print_usage(std::cout, usage, options, method);
            return kExitOk;
        }
        if (adjust) adjust(parsed.args);
    } catch (const InputError& error) {
        return report_input_error(command, error.field(), error.what(), options);
    }
    return run_method(command, method, parsed, options, print_human);
}

}  // namespace tally::cli
