// Subcommands of the `tally` CLI; each takes the whole argv (argv[1] is the subcommand name)
// and returns the exit status (0 ok, 2 bad input).
#pragma once

#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli.h"

namespace tally::cli {

int cmd_time(int argc, char** argv);      // cmd_time.cpp
int cmd_params(int argc, char** argv);    // cmd_accounting.cpp
int cmd_flops(int argc, char** argv);     // cmd_accounting.cpp
int cmd_memory(int argc, char** argv);    // cmd_accounting.cpp
int cmd_finetune(int argc, char** argv);  // cmd_accounting.cpp
int cmd_fit(int argc, char** argv);       // cmd_accounting.cpp
int cmd_kv_cache(int argc, char** argv);  // cmd_accounting.cpp
int cmd_presets(int argc, char** argv);   // cmd_accounting.cpp
int cmd_float(int argc, char** argv);     // cmd_float.cpp
int cmd_bench(int argc, char** argv);     // cmd_bench.cpp
int cmd_mfu(int argc, char** argv);       // cmd_time.cpp
int cmd_step(int argc, char** argv);      // cmd_step.cpp
int cmd_plan(int argc, char** argv);      // cmd_step.cpp

// A command's option table (empty for an unknown command), for --help and the API/CLI parity test.
std::span<const Option> accounting_options(std::string_view command);  // cmd_accounting.cpp
std::span<const Option> time_options(std::string_view command);        // cmd_time.cpp: time, mfu
std::span<const Option> step_options(std::string_view command);        // cmd_step.cpp: step, plan

// --config FILE -> "model" (tally object) or "hf_config" (text); --no-dropout -> dropout false.
void fix_flags(nlohmann::json& args);  // cmd_accounting.cpp

}  // namespace tally::cli
