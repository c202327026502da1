// tally: the command-line front end of the engine. Every subcommand calls the same JSON API the
// web page calls through wasm, so `--json` output equals the page's numbers to the last bit.
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli.h"
#include "commands.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"

namespace {

using namespace tally::cli;

struct Command {
    const char* name;
    int (*run)(int, char**);
    const char* summary;
};

// `tally call METHOD [JSON]`: any API method with raw JSON arguments; prints the full envelope.
constexpr const char* kCallUsage =
    "usage: tally call METHOD ['{\"json\":\"args\"}']\n"
    "Runs an API method (see `tally methods`) on JSON arguments and prints the whole envelope:\n"
    "{\"ok\":true,\"result\":{...}} (exit 0) or {\"ok\":false,\"error\":{\"field\",\"message\"}} (exit 2).";

bool is_help(const char* word) { return std::string_view(word) == "--help" || std::string_view(word) == "-h"; }

int cmd_call(int argc, char** argv) {
    // --help (alone, in the method's place) exits 0, as every command's does; a method is never named --help.
    if (argc == 3 && is_help(argv[2])) {
        std::cout << kCallUsage << "\n";
        return kExitOk;
    }
    if (argc < 3 || argc > 4) {
        std::cerr << kCallUsage << "\n";
        return kExitBadInput;
    }
    const std::string envelope = tally::api::call(argv[2], argc == 4 ? argv[3] : "{}");
    std::cout << envelope << "\n";
    return envelope.rfind("{\"ok\":true", 0) == 0 ? kExitOk : kExitBadInput;
}

// `tally methods`: names and summaries; `--json`: every method's declared arguments and result fields.
int cmd_methods(int argc, char** argv) {
    if (argc == 3 && is_help(argv[2])) {
        std::cout << "usage: tally methods [--json]\nLists the API methods and their summaries; --json: every "
                     "method's declared arguments (type, unit, range, default, flag, when it applies) and results.\n";
        return kExitOk;
    }
    const bool json_output = argc == 3 && std::string(argv[2]) == "--json";
    if (argc > 2 && !json_output) {
        std::cerr << "tally methods: takes only --json, got \"" << tally::printable(argv[2], 40) << "\"\n";
        return kExitBadInput;
    }
    if (json_output) {
        std::cout << tally::api::list_methods(true).dump(2) << "\n";
        return kExitOk;
    }
    for (const auto& method : tally::api::list_methods())
        std::cout << "  " << method["name"].get<std::string>() << ": " << method["summary"].get<std::string>() << "\n";
    return kExitOk;
}

constexpr Command kCommands[] = {
    {"time", cmd_time, "6ND FLOPs and training time from params, tokens, GPUs, peak FLOP/s and MFU"},
    {"params", cmd_params, "exact parameter count of a model, by component"},
    {"flops", cmd_flops, "forward and training FLOPs by component, beside 6ND"},
    {"memory", cmd_memory, "training memory budget per GPU"},
    {"finetune", cmd_finetune, "fine-tuning on one GPU: LoRA, QLoRA, full with 8-bit optimizers"},
    {"mfu", cmd_mfu, "model FLOPs utilization from measured tokens per second"},
    {"fit", cmd_fit, "largest model on N GPUs, or fewest GPUs for a model"},
    {"kv-cache", cmd_kv_cache, "inference KV cache and weights"},
    {"presets", cmd_presets, "list model and hardware presets"},
    {"float", cmd_float, "encode or decode a number in a float format, bit-exactly"},
    {"step", cmd_step, "predicted step time, MFU and where the time goes for a parallel layout"},
    {"plan", cmd_plan, "layouts that fit, ranked by predicted throughput"},
    {"bench", cmd_bench, "benchmarks: `tally bench gemm`"},
    {"call", cmd_call, "run any API method with JSON arguments"},
    {"methods", cmd_methods, "list the API methods (--json: their declared arguments and results)"},
};

void print_help(std::ostream& out) {
    out << "tally: what it costs to train a language model, counted exactly.\n\n"
           "usage: tally COMMAND [options] [--json]\n\nCommands:\n";
    for (const Command& command : kCommands) {
        out << "  " << command.name;
        for (std::size_t pad = std::strlen(command.name); pad < 10; ++pad) out << ' ';
        out << command.summary << "\n";
    }
    out << "\n`tally COMMAND --help` (or `tally help COMMAND`) shows a command's options and defaults. Exit status: 0 ok, 2 bad input.\n";
}

int run(const Command& command, int argc, char** argv) {
    try {
        return command.run(argc, argv);
    } catch (const tally::InputError& error) {
        std::cerr << "tally " << command.name << ": " << tally::printable_message(error.what()) << "\n";
        return kExitBadInput;
    } catch (const std::exception& error) {
        // A bug, not bad input: say so rather than abort.
        std::cerr << "tally " << command.name << ": internal error: " << tally::printable_message(error.what()) << "\n";
        return kExitInternalError;
    }
}

const Command* find_command(std::string_view name) {
    for (const Command& command : kCommands)
        if (name == command.name) return &command;
    return nullptr;
}

int unknown_command(const char* name) {
    std::cerr << "tally: unknown command \"" << tally::printable(name, 40) << "\"\n\n";
    print_help(std::cerr);
    return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
        print_help(argc < 2 ? std::cerr : std::cout);
        return argc < 2 ? kExitBadInput : kExitOk;
    }
    // `tally help [COMMAND]` as `git help`: the overview, or that command's --help.
    if (std::string_view(argv[1]) == "help") {
        if (argc == 2) {
            print_help(std::cout);
            return kExitOk;
        }
        if (argc > 3) {
            std::cerr << "tally help: give one command, got " << argc - 2 << " arguments\n";
            return kExitBadInput;
        }
        const Command* command = find_command(argv[2]);
        if (command == nullptr) return unknown_command(argv[2]);
        char help_flag[] = "--help";
        char* help_argv[] = {argv[0], argv[2], help_flag, nullptr};
        return run(*command, 3, help_argv);
    }
    const Command* command = find_command(argv[1]);
    return command == nullptr ? unknown_command(argv[1]) : run(*command, argc, argv);
}
