// Tests of the CLI's flag rules (issue 38, items 5-8): a flag where it does not apply, plan's arguments checked
// before it blames memory, output paths opened as input paths are, repeated and empty values, help exiting 0 and
// messages in the user's flags. Each runs the built `tally` as a child process (cli_runner.h), which a hang fails.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "tally/api.h"
#include "tally/plan/plan.h"

namespace {

using tally::test::CliRun;
using tally::test::run_cli_argv;

// A fresh folder for the output-path rows, removed when the test binary exits.
struct Scratch {
    std::string dir;
    Scratch() {
        char pattern[] = "/tmp/tally_cli_flags_XXXXXX";
        dir = mkdtemp(pattern);
        mkfifo((dir + "/fifo").c_str(), 0600);
        mkdir((dir + "/folder").c_str(), 0700);
    }
    ~Scratch() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
};
const Scratch& scratch() {
    static const Scratch s;
    return s;
}

void refused(const std::vector<std::string>& argv, const std::string& wanted) {
    const CliRun r = run_cli_argv(argv, 20);
    INFO("tally " <<
         [&] {
             std::string line;
             for (const auto& a : argv) line += a + " ";
             return line;
         }()
                  << "\nstderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK_FALSE(r.signaled);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(wanted));
}

const std::vector<std::string> kStep{"step", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8"};
const std::vector<std::string> kPlan{"plan", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8"};
std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
}

}  // namespace

TEST_CASE("a flag given where its declaration says it does not apply exits 2 naming the flag and the condition") {
    refused({"kv-cache", "--model", "llama-3-8b", "--context", "4096", "--fragmentation", "0.1"},
            "--fragmentation applies only with --hardware given or --capacity-bytes given");
    refused({"finetune", "--model", "llama-3-8b", "--method", "lora", "--double-quant", "false"},
            "--double-quant applies only with --method qlora (here --method is lora)");
    refused({"finetune", "--model", "llama-3-8b", "--method", "full", "--lora-rank", "16"},
            "--lora-rank applies only with --method lora or qlora");
    refused(with(kStep, {"--lora-targets", "all-linear"}), "--lora-targets applies only with --lora-rank > 0");
    refused(with(kStep, {"--cost-balanced-stages"}), "--cost-balanced-stages applies only with --pp > 1");
    refused(with(kStep, {"--keep-stage-outputs"}), "--keep-stage-outputs applies only with --pp > 1");
    refused(with(kStep, {"--no-cp-load-balance"}), "--no-cp-load-balance applies only with --cp > 1");
    refused(with(kPlan, {"--grad-accum-full"}), "--grad-accum-full applies only with --grad-accum given or --stack");
    refused({"memory", "--model", "llama-3-8b", "--gpus-per-node", "4"}, "--gpus-per-node applies only with --offload");
    // Where it applies, the same flag runs.
    CHECK(run_cli_argv(with(kStep, {"--pp", "2", "--cost-balanced-stages"})).exit_code == 0);
    CHECK(run_cli_argv(with(kPlan, {"--grad-accum", "fp32", "--grad-accum-full", "--top", "1"})).exit_code == 0);
    // --help says when: from the same declaration.
    const CliRun help = run_cli_argv({"step", "--help"});
    CHECK_THAT(help.out, Catch::Contains("only with --pp > 1"));
}

TEST_CASE("plan names the argument no layout can use rather than blaming memory; memory only when a layout was") {
    refused(with(kPlan, {"--precision", "banana"}), "--precision must be");
    refused(with(kPlan, {"--ep", "2"}), "--ep ");
    refused(with(kPlan, {"--cp", "2"}), "--cp ");
    refused(with(kPlan, {"--lora-rank", "999999"}), "--lora-rank ");
    for (const auto& extra : std::vector<std::vector<std::string>>{
             {"--precision", "banana"}, {"--ep", "2"}, {"--cp", "2"}, {"--lora-rank", "999999"}}) {
        const CliRun r = run_cli_argv(with(kPlan, extra));
        CHECK_THAT(r.err, !Catch::Contains("add GPUs"));
    }
    // A model too large for one GPU is memory's fault, and says so.
    refused({"plan", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "1"}, "fits in memory; add GPUs");
    // Searched arguments are refused through call as well (plan overwrites them).
    const auto env = nlohmann::json::parse(
        tally::api::call("plan", R"({"model":"llama-3-8b","hardware":"h100-sxm","gpus":8,"tp":2})"));
    CHECK(env["ok"] == false);
    CHECK(env["error"]["field"] == "tp");
}

TEST_CASE("--write-bands is opened as input paths are: a FIFO, a device, a folder or an empty path is refused") {
    const std::string& d = scratch().dir;
    // A FIFO with no reader: refused at once (a blocking open would wait for a reader for ever).
    refused({"step", "--validate", "--write-bands", d + "/fifo"}, "is a FIFO");
    refused({"step", "--validate", "--write-bands", "/dev/null"}, "is a device");
    refused({"step", "--validate", "--write-bands", d + "/folder"}, "directory");
    refused({"step", "--validate", "--write-bands", ""}, "--write-bands needs a file path, got an empty one");
    refused({"step", "--validate", "--write-bands"}, "--write-bands needs a value");
    refused({"step", "--validate", "--write-bands", d + "/a.json", "--write-bands", d + "/b.json"},
            "--write-bands is given twice");
    refused({"step", "--validate", "--json", "--json"}, "--json is given twice");
    refused({"step", "--validate", "--runs", "", "--json"}, "--runs needs a file path");
    CHECK_FALSE(std::filesystem::exists(d + "/a.json"));
    // A regular file is written.
    const CliRun ok = run_cli_argv({"step", "--validate", "--write-bands", d + "/bands.json"});
    INFO(ok.err);
    CHECK(ok.exit_code == 0);
    std::ifstream in(d + "/bands.json");
    CHECK(nlohmann::json::parse(in, nullptr, false).contains("bands"));
}

TEST_CASE("repeated and empty values are refused by every command, naming the flag") {
    refused({"memory", "--model", "llama-3-8b", "--json", "--json"}, "--json is given twice");
    refused({"memory", "--model", ""}, "--model needs a value, got an empty one");
    refused({"memory", "--model=", "--gpus", "8"}, "--model needs a value, got an empty one");
    refused({"memory", "--model", "llama-3-8b", "--gpus", "8", "--gpus", "8"}, "--gpus is given twice");
}

TEST_CASE("--help exits 0 for every command, call and methods included") {
    for (const char* command : {"time", "params", "flops", "memory", "finetune", "mfu", "fit", "kv-cache", "presets",
                                "float", "step", "plan", "bench", "call", "methods"}) {
        for (const char* help : {"--help", "-h"}) {
            INFO(command << " " << help);
            const CliRun r = run_cli_argv({command, help});
            CHECK(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("usage"));
        }
    }
    CHECK(run_cli_argv({"step", "--validate", "--help"}).exit_code == 0);
}

TEST_CASE("messages name the flag the user typed, and plan's --gpus help gives the bound its check uses") {
    refused({"memory", "--model", "llama-3-8b", "--offload", "optimizer"}, "--offload optimizer moves");
    const CliRun offload = run_cli_argv({"memory", "--model", "llama-3-8b", "--offload", "optimizer"});
    CHECK_THAT(offload.err, !Catch::Contains("offload_optimizer"));
    // A 64-bit count overflow names the input that drove it.
    refused({"memory", "--model", "llama-3-405b", "--micro-batch", "1000000000", "--seq", "131072"},
            "the most extreme is --micro-batch");
    // plan --help's range for --gpus is the planner's bound, and the check refuses one past it with the same number.
    const CliRun help = run_cli_argv({"plan", "--help"});
    const std::regex gpus_line(R"(--gpus X[^\n]*in \[1, ([0-9,]+)\])");
    std::smatch m;
    REQUIRE(std::regex_search(help.out, m, gpus_line));
    std::string digits = m[1];
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    CHECK(std::stoll(digits) == tally::kMaxPlanGpus);
    refused(
        {"plan", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", std::to_string(tally::kMaxPlanGpus + 1)},
        "--gpus must be a whole number in [1, " + std::to_string(tally::kMaxPlanGpus) + "]");
}
