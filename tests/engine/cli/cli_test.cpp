// Tests of engine/cli/ (cli.cpp and the commands): the hostile-input table. Each row is one bad
// invocation of the built `tally` binary, run as a child process with an exact argv (tests/engine/
// cli_runner.h): it must exit with status 2 (never a signal, never a hang), print a message, name the
// user's flag or the cause, and print no raw control character. The table lives in Catch2 rather than
// a node test because the CLI is native code: it needs only the native build, and fork/exec passes any
// bytes (invalid UTF-8, escape sequences) as argv without a shell's quoting.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <regex>
#include <set>
#include <sstream>

#include "../../../engine/cli/commands.h"
#include "cli_runner.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "test_paths.h"

namespace {

using nlohmann::json;
using tally::test::CliRun;
using tally::test::run_cli_argv;

// Removes the fixture folder when the test binary exits.
struct RemoveAtExit {
    std::string dir;
    ~RemoveAtExit() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
};

// Fixture files for the --config rows, made once in a fresh temporary folder.
const std::string& fixtures() {
    static const std::string dir = [] {
        char pattern[] = "/tmp/tally_cli_test_XXXXXX";
        const std::string d = mkdtemp(pattern);
        const auto write = [&](const std::string& name, const std::string& text) {
            std::ofstream(d + "/" + name, std::ios::binary) << text;
        };
        const std::string gpt2_fields =
            R"("n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024)";
        write("big.json", "{\"x\":\"" + std::string(2 << 20, 'a') + "\"}");
        write("deep.json",
              "{\"model_type\":\"gpt2\",\"x\":" + std::string(200000, '[') + std::string(200000, ']') + "}");
        write("latin1.json", "{\"model_type\":\"gpt2\",\"_name_or_path\":\"caf\xe9\"," + gpt2_fields + "}");
        write("smart_quotes.json", "{\xe2\x80\x9cmodel_type\xe2\x80\x9d: \xe2\x80\x9cgpt2\xe2\x80\x9d}");
        write("no_model_type.json", R"({"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32})");
        write("array.json", "[1, 2, 3]");
        write("empty.json", "");
        write("bert.json", R"({"model_type":"bert","hidden_size":768})");
        write("bert_base.json",
              R"({"model_type":"bert","hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,
            "intermediate_size":3072,"max_position_embeddings":512,"type_vocab_size":2,"vocab_size":30522})");
        write("t5_small.json", R"({"model_type":"t5","d_ff":2048,"d_kv":64,"d_model":512,"num_heads":8,"num_layers":6,
            "relative_attention_num_buckets":32,"vocab_size":32128,"is_encoder_decoder":true})");
        write("llama_no_hidden.json", R"({"model_type":"llama","num_hidden_layers":2})");
        write("tally_bad_layers.json",
              R"({"vocab_size":100,"hidden_size":64,"num_layers":0,"num_heads":4,"mlp":"gelu"})");
        write("huge_number.json", "{\"model_type\":\"gpt2\",\"n_embd\":1e400}");
        write("control_name.json",
              "{\"model_type\":\"gpt2\",\"_name_or_path\":\"evil\\u001b[2J\\u0007name\"," + gpt2_fields + "}");
        mkfifo((d + "/fifo").c_str(), 0600);
        mkdir((d + "/folder.json").c_str(), 0700);
        [[maybe_unused]] const int linked = symlink("/dev/zero", (d + "/zero_link.json").c_str());
        return d;
    }();
    static const RemoveAtExit cleanup{dir};
    return dir;
}

struct BadCase {
    std::vector<std::string> argv;
    std::string needle;  // the flag, field or cause the message must name
};

std::vector<std::string> time_with(std::vector<std::string> extra) {
    std::vector<std::string> base = {"time", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.4"};
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
}

std::vector<std::string> with_params(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--params", "7e9"});
    return time_with(extra);
}

std::vector<BadCase> bad_cases() {
    const std::string f = fixtures() + "/";
    return {
        // time: numbers are decimal or scientific, finite, in range
        {with_params({"--gpus", "0x10"}), "--gpus"},  // hex used to be 16
        {with_params({"--gpus", "inf"}), "--gpus"},
        {with_params({"--gpus", "nan"}), "--gpus"},
        {with_params({"--gpus", "1.5"}), "--gpus"},
        {with_params({"--gpus", "0"}), "--gpus"},
        {with_params({"--gpus", "-1"}), "--gpus"},
        {with_params({"--gpus", ""}), "--gpus"},
        {with_params({"--gpus", " 8"}), "--gpus"},
        {with_params({"--gpus", "1e9"}), "--gpus"},
        {with_params({"--mfu", "1.5"}), "--mfu"},
        {with_params({"--mfu", "0"}), "--mfu"},
        {with_params({"--mfu", "1e999"}), "--mfu"},
        {with_params({"--mfu", "1e-400"}), "--mfu"},
        {with_params({"--mfu", ".4e"}), "--mfu"},
        {with_params({"--mfu", "+-1"}), "--mfu"},
        {with_params({"--mfu", "0.4\x1b[31m"}), "--mfu"},
        {with_params({"--tokens", "1e308"}), "--tokens"},  // 6ND used to overflow to inf
        {with_params({"--price", "1e308"}), "--price"},    // the cost used to be null
        {with_params({"--price", "-1"}), "--price"},
        {with_params({"--price", "0"}), "--price"},
        {with_params({"--params", "8e9"}), "twice"},  // a repeated flag used to win silently
        {with_params({"--json", "--json"}), "twice"},
        {with_params({"--json=1"}), "--json"},
        {with_params({"--model", "llama-2-7b"}), "--model"},  // used to be ignored beside --params
        {with_params({"--seq", "2048"}), "--seq"},
        {with_params({"--dtype", "banana"}), "--dtype"},  // used to be accepted and echoed
        {with_params({"--peak-flops", "1e15"}), "--peak-flops"},
        {with_params({"--hardware", "h100-sxm"}), "--hardware"},
        {with_params({"--flops-basis", "exact"}), "--flops-basis"},
        {with_params({"--bogus", "1"}), "--bogus"},
        {with_params({"--mfu"}), "--mfu"},
        {with_params({"--price", "--json"}), "--price"},
        {with_params({"--params=0x1p3"}), "--params"},
        {with_params({"--tokens=abc"}), "--tokens"},
        {with_params({"--peak-tflops", "1e-300"}), "--peak"},
        {{"time", "--params", "7e9", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.4"}, "--tokens"},
        {{"time", "--params", "7e9", "--tokens", "1e12", "--peak-tflops", "989", "--mfu", "0.4"}, "--gpus"},
        {{"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "989"}, "--mfu"},
        {{"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--mfu", "0.4"}, "--hardware"},
        {{"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--hardware", "nope", "--mfu", "0.4"},
         "--hardware"},
        {{"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--hardware", "h100-sxm", "--dtype", "banana",
          "--mfu", "0.4"},
         "--dtype"},
        {{"time", "--model", "nope", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.4"},
         "--model"},
        {{"time", "--model", "llama-2-7b", "--seq", "0", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "989",
          "--mfu", "0.4"},
         "--seq"},
        {{"time", "--model", "llama-2-7b", "--flops-basis", "banana", "--tokens", "1e12", "--gpus", "8",
          "--peak-tflops", "989", "--mfu", "0.4"},
         "--flops-basis"},
        {{"time", "--model", "llama-2-7b", "--tokens", "1e300", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.4"},
         "--tokens"},
        // params: model sources and config files
        {{"params"}, "--model"},
        {{"params", "--model", "nope"}, "--model"},
        {{"params", "--model", "\x1b[2Jnope"}, "--model"},
        {{"params", "--model", std::string(5000, 'x')}, "--model"},
        {{"params", "--model", "gpt2-small", "--model", "gpt2-small"}, "twice"},
        {{"params", "--model", "gpt2-small", "--config", f + "control_name.json"}, "--config"},
        {{"params", "--seq", "5"}, "--seq"},
        {{"params", "--config"}, "--config"},
        {{"params", "--config", ""}, "empty"},
        {{"params", "--config", "/dev/zero"}, "device"},  // used to read until memory ran out
        {{"params", "--config", f + "zero_link.json"}, "device"},
        {{"params", "--config", f + "fifo"}, "FIFO"},              // used to block forever
        {{"params", "--config", f + "folder.json"}, "directory"},  // used to say "not valid JSON"
        {{"params", "--config", f + "missing.json"}, "does not exist"},
        {{"params", "--config", f + "big.json"}, "larger than"},
        {{"params", "--config", f + "deep.json"}, "deeper than"},  // used to overflow the stack
        {{"params", "--config", f + "latin1.json"}, "UTF-8"},
        {{"params", "--config", f + "smart_quotes.json"}, "not valid JSON"},  // used to abort
        {{"params", "--config", f + "no_model_type.json"}, "model_type"},     // used to say num_layers
        {{"params", "--config", f + "array.json"}, "JSON object"},
        {{"params", "--config", f + "empty.json"}, "not valid JSON"},
        {{"params", "--config", f + "bert.json"}, "model_type"},
        {{"params", "--config", f + "llama_no_hidden.json"}, "hidden_size"},
        {{"params", "--config", f + "tally_bad_layers.json"}, "num_layers"},
        {{"params", "--config", f + "huge_number.json"}, "not valid JSON"},
        {{"presets", "--bogus"}, "--bogus"},
        // flops
        {{"flops", "--model", "gpt2-small", "--tokens", "1e308"}, "--tokens"},  // used to print inf and -nan
        {{"flops", "--model", "gpt2-small", "--tokens", "0"}, "--tokens"},
        {{"flops", "--model", "gpt2-small", "--seq", "0x800"}, "--seq"},
        {{"flops", "--model", "gpt2-small", "--seq", "1e10"}, "--seq"},
        {{"flops", "--model", "gpt2-small", "--attention-flops", "banana"}, "--attention-flops"},
        {{"flops", "--model", "gpt2-small", "--recompute", "banana"}, "--recompute"},
        {{"flops", "--model", "gpt2-small", "--flash-attn=yes"}, "--flash-attn"},
        {{"flops", "--model", "gpt2-small", "--flash-attn", "--flash-attn"}, "twice"},
        // memory
        {{"memory", "--model", "llama-2-7b", "--zero", "5"}, "--zero"},
        {{"memory", "--model", "llama-2-7b", "--gpus", "6", "--tp", "4"}, "--gpus"},
        {{"memory", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--capacity-bytes", "8e10"}, "--capacity-bytes"},
        {{"memory", "--model", "llama-2-7b", "--recipe", "banana"}, "--recipe"},
        {{"memory", "--model", "llama-2-7b", "--weights", "banana"}, "--weights"},
        {{"memory", "--model", "llama-2-7b", "--optimizer", "banana"}, "--optimizer"},
        {{"memory", "--model", "llama-2-7b", "--master-weights", "banana"}, "--master-weights"},
        {{"memory", "--model", "llama-2-7b", "--activation-bytes", "3"}, "--activation-bytes"},
        {{"memory", "--model", "llama-2-7b", "--capacity-bytes", "0"}, "--capacity-bytes"},
        {{"memory", "--model", "llama-2-7b", "--micro-batch", "0"}, "--micro-batch"},
        {{"memory", "--model", "llama-2-7b", "--tp", "0x2"}, "--tp"},
        {{"memory", "--model", "llama-2-7b", "--no-dropout=1"}, "--no-dropout"},
        {{"memory", "--model", "llama-2-7b", "--sequence-parallel", "--sequence-parallel"}, "twice"},
        {{"memory", "--model", "llama-2-7b", "--hardware", "nope"}, "--hardware"},
        // fit: each mode's options only
        {{"fit", "--gpus", "8", "--hardware", "h100-sxm", "--seq", "2048"}, "--seq"},
        {{"fit", "--gpus", "8", "--hardware", "h100-sxm", "--micro-batch", "2"}, "--micro-batch"},
        {{"fit", "--gpus", "8", "--hardware", "h100-sxm", "--max-gpus", "5"}, "--max-gpus"},
        {{"fit", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--gpus", "8"}, "--gpus"},
        {{"fit", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--reserve-fraction", "0.1"}, "--reserve-fraction"},
        {{"fit", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--global-batch", "8"}, "--global-batch"},
        {{"fit", "--gpus", "8", "--hardware", "h100-sxm", "--recompute", "full"}, "--recompute"},
        {{"fit", "--gpus", "8", "--hardware", "h100-sxm", "--reserve-fraction", "1"}, "--reserve-fraction"},
        {{"fit", "--mode", "banana"}, "--mode"},
        {{"fit", "--gpus", "8"}, "--hardware"},
        // kv-cache
        {{"kv-cache", "--model", "llama-2-7b"}, "--context"},
        {{"kv-cache", "--model", "llama-2-7b", "--context", "0"}, "--context"},
        {{"kv-cache", "--model", "llama-2-7b", "--context", "4096", "--kv-dtype", "banana"}, "--kv-dtype"},
        {{"kv-cache", "--model", "llama-2-7b", "--context", "4096", "--weights-dtype", "banana"}, "--weights-dtype"},
        {{"kv-cache", "--model", "llama-2-7b", "--context", "4096", "--batch", "0"}, "--batch"},
        {{"kv-cache", "--model", "llama-2-7b", "--context", "4096", "--hardware", "h100-sxm", "--capacity-bytes",
          "8e10"},
         "--capacity-bytes"},
        // float
        {{"float", "--format", "e4m3"}, "--value"},
        {{"float", "--value", "1"}, "--format"},
        {{"float", "--format", "banana", "--value", "1"}, "--format"},
        {{"float", "--format", "e4m3", "--value", "abc"}, "--value"},
        {{"float", "--format", "e4m3", "--code", "0x7e", "--value", "1"}, "--code"},
        {{"float", "--format", "e4m3", "--value", "1", "--flip-bit", "3"}, "--flip-bit"},
        {{"float", "--format", "e4m3", "--code", "0x7e", "--rounding", "up"}, "--rounding"},
        {{"float", "--format", "e4m3", "--code", "0x7e", "--no-saturate"}, "--no-saturate"},
        {{"float", "--all", "--format", "e4m3", "--value", "1"}, "--format"},
        {{"float", "--format", "e4m3", "--code", "zz"}, "--code"},
        {{"float", "--format", "e4m3", "--value", "1", "--saturate", "--no-saturate"}, "--saturate"},
        {{"float", "--format", "e4m3", "--value", "1", "--rounding", "banana"}, "--rounding"},
        {{"float", "--format", "e4m3", "--code", "0x7e", "--flip-bit", "99"}, "--flip-bit"},
        {{"float", "--format", "e4m3", "--format", "e5m2", "--value", "1"}, "twice"},
        // bench: bounded work
        {{"bench", "gemm", "--n", "0x10"}, "--n"},
        {{"bench", "gemm", "--n", "4096"}, "--n"},
        {{"bench", "gemm", "--kernel", "naive", "--n", "1024"}, "--n"},  // naive 8192 used to run for minutes
        {{"bench", "gemm", "--n", "16", "--reps", "100", "--min-sample-ms", "10000"}, "would take"},
        {{"bench", "gemm", "--reps", "0"}, "--reps"},
        {{"bench", "gemm", "--reps", "5", "--reps", "5"}, "twice"},
        {{"bench", "gemm", "--reps"}, "--reps"},
        {{"bench", "gemm", "--warmup", "-1"}, "--warmup"},
        {{"bench", "gemm", "--mib", "64"}, "--mib"},
        {{"bench", "gemm", "--kernel", "turbo", "--n", "16"}, "--kernel"},
        {{"bench", "probe", "--mib", "1024"}, "--mib"},  // used to leave a 1 GB wasm heap
        {{"bench", "probe", "--n", "256"}, "--n"},
        {{"bench", "probe", "--reps", "1e2"}, "--reps"},
        {{"bench", "banana"}, "banana"},
        {{"bench"}, "usage"},
        // call: the envelope on stdout names the field
        {{"call"}, "usage"},
        {{"call", "params", "{", "x"}, "usage"},
        {{"call", "params", "\xc3"}, "args"},
        {{"call", "params", "{\"model\":\"caf\xe9\"}"}, "UTF-8"},  // used to abort (SIGABRT)
        {{"call", "params", "\xe2\x80\x9cmodel\xe2\x80\x9d"}, "not valid JSON"},
        {{"call", "tensor_bytes",
          "{\"dtype\":\"bf16\",\"shape\":" + std::string(60000, '[') + std::string(60000, ']') + "}"},
         "deeper than"},  // used to overflow the stack (SIGSEGV)
        {{"call", "bogus"}, "method"},
        {{"call", "par\xffms"}, "method"},
        {{"call", "params", "[]"}, "JSON object"},
        {{"call", "params", "{\"model\":\"\\u001b[2J\"}"}, "model"},
        {{"call", "training_cost", R"({"params":"0x10","tokens":1e12,"gpus":8,"peak_tflops":989,"mfu":0.4})"},
         "params"},
        {{"call", "roofline_custom", R"({"peak_flops_per_s":1e308,"bandwidth_bytes_per_s":1e-300})"},
         "overflows or is undefined"},
        // issue 21: step --validate used to hang on a FIFO and fail as an internal error on a folder
        {{"step", "--validate", f + "fifo"}, "FIFO"},
        {{"step", "--validate", f + "folder.json"}, "directory"},
        {{"step", "--validate", f + "zero_link.json"}, "device"},
        {{"step", "--validate", f + "array.json"}, "not a runs file"},
        {{"step", "--validate", f + "big.json"}, "1 MiB"},
        {{"step", "--config", f + "fifo", "--hardware", "h100-sxm", "--gpus", "8"}, "FIFO"},
        // issue 24: the FP8 recipe is checked against the list and the GPU; --runs needs its file
        {{"step", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--precision", "fp9"},
         "--precision must be bf16, fp16, fp8-delayed"},
        {{"step", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--precision", "mxfp8"},
         "MX block-scaled tensor cores"},
        {{"step", "--validate", "--runs"}, "--runs needs a value: a file path"},
        {{"step", "--model", "llama-2-7b", "--hardware", "h100-sxm"}, "--gpus is required"},  // used to run on 1
        {{"plan", "--model", "llama-2-7b", "--hardware", "h100-sxm"}, "--gpus is required"},
        // issue 21: flags the chosen mode ignores used to succeed
        {with_params({"--tp", "8"}), "--tp applies only with --predict-mfu"},
        {with_params({"--zero", "1"}), "--zero applies only"},
        {with_params({"--pp", "2"}), "--pp applies only"},
        {with_params({"--micro-batch", "2"}), "--micro-batch applies only"},
        {with_params({"--global-batch", "64"}), "--global-batch applies only"},
        {with_params({"--sequence-parallel"}), "--sequence-parallel applies only"},
        {with_params({"--interleave", "2"}), "--interleave applies only"},
        {with_params({"--capacity-factor", "1.25"}), "--capacity-factor applies only"},
        {with_params({"--decoder-seq", "100"}), "--decoder-seq applies only"},
        {with_params({"--predict-mfu"}), "--predict-mfu applies only"},
        {time_with({"--model", "llama-2-7b", "--tp", "8"}), "--tp applies only with --predict-mfu"},
        {time_with({"--model", "llama-2-7b", "--pp", "2"}), "--pp applies only"},
        // issue 21: messages used to name --peak-flops with "inf", "below 0", total_flops, args with "(nan)"
        {{"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "1e300", "--mfu", "0.4"},
         "--peak-tflops must be in (0, "},
        {{"time", "--params", "1e308", "--tokens", "1e308", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.4"},
         "--params must be a parameter count in [1, "},
        {time_with({"--params", "5e-324"}), "--params must be a parameter count in [1, "},
        {{"call", "block_quantize", R"({"scheme":"mxfp8_e4m3","values":[1e308,1e308,-1e308]})"},
         "\"field\":\"values\""},
        // issue 21: a NUL inside a quoted value used to cut the message short
        {{"call", "float_encode", R"({"format":"ab\u0000cd","value":1})"}, "ab\\\\x00cd\\\""},
        // the command itself
        {{}, "usage"},
        {{"bogus"}, "unknown command"},
        {{"methods", "--bogus"}, "--bogus"},
        {{"\x1b[2J\x1b[31m"}, "unknown command"},
    };
}

bool has_raw_control(const std::string& text) {
    for (const char c : text)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return true;
    return false;
}

std::string shown(const std::vector<std::string>& argv) {
    std::string out = "tally";
    for (const auto& a : argv) out += " '" + (a.size() > 80 ? a.substr(0, 80) + "..." : a) + "'";
    return out;
}

}  // namespace

TEST_CASE("every bad CLI invocation in the table exits 2 with a message naming the flag or cause, never a signal") {
    const auto cases = bad_cases();
    REQUIRE(cases.size() >= 100);
    int handled = 0;
    for (const BadCase& bad : cases) {
        const CliRun run = run_cli_argv(bad.argv);
        const std::string output = run.err + run.out;
        INFO(shown(bad.argv) << "\nstderr: " << run.err << "\nstdout: " << run.out.substr(0, 400));
        CHECK_FALSE(run.timed_out);
        CHECK_FALSE(run.signaled);
        CHECK(run.exit_code == 2);
        CHECK_FALSE(output.empty());
        CHECK(output.find(bad.needle) != std::string::npos);
        CHECK_FALSE(has_raw_control(output));
        if (!run.timed_out && !run.signaled && run.exit_code == 2 && output.find(bad.needle) != std::string::npos &&
            !has_raw_control(output))
            ++handled;
    }
    CHECK(handled == static_cast<int>(cases.size()));
}

TEST_CASE("a config's _name_or_path is printed with its control characters escaped") {
    const CliRun run = run_cli_argv({"params", "--config", fixtures() + "/control_name.json"});
    REQUIRE(run.exit_code == 0);
    CHECK(run.out.find("evil\\x1b[2J\\x07name") != std::string::npos);
    CHECK_FALSE(has_raw_control(run.out));
}

TEST_CASE("implausible but legal values succeed and print a warning on stderr") {
    const CliRun price = run_cli_argv(with_params({"--price", "1000"}));
    CHECK(price.exit_code == 0);
    CHECK(price.err.find("warning: --price") != std::string::npos);
    const CliRun mfu = run_cli_argv(
        {"time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--peak-tflops", "989", "--mfu", "0.9"});
    CHECK(mfu.exit_code == 0);
    CHECK(mfu.err.find("warning: --mfu") != std::string::npos);
    const CliRun plain = run_cli_argv(with_params({"--price", "2.5"}));
    CHECK(plain.exit_code == 0);
    CHECK(plain.err.empty());
}

TEST_CASE("numbers in scientific notation and --flag=value still parse") {
    const CliRun run = run_cli_argv({"time", "--params=7E9", "--tokens", "1.4e+12", "--gpus", "8e0", "--peak-tflops",
                                     ".9895e3", "--mfu", "0.4", "--json"});
    REQUIRE(run.exit_code == 0);
    CHECK(run.out.find("\"gpus\": 8") != std::string::npos);
}

// ---------------------------------------------------------------- --json output

namespace {

// Runs the CLI with space-separated words (no word holds a space here); returns {exit status, stdout}.
std::pair<int, std::string> run_cli(const std::string& words) {
    std::vector<std::string> argv;
    std::size_t start = 0;
    while (start < words.size()) {
        const std::size_t end = std::min(words.find(' ', start), words.size());
        if (end > start) argv.push_back(words.substr(start, end - start));
        start = end + 1;
    }
    const CliRun run = run_cli_argv(argv);
    return {run.signaled ? -1 : run.exit_code, run.out};
}

}  // namespace

TEST_CASE("the CLI's time --json prints the training_cost result object exactly; a bad value exits with status 2") {
    auto [status, out] = run_cli("time --params 70e9 --tokens 15e12 --gpus 1024 --peak-tflops 989.5 --mfu 0.5 --json");
    REQUIRE(status == 0);
    const json cli = json::parse(out);
    const json api = json::parse(tally::api::call(
        "training_cost", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":0.5})"))["result"];
    CHECK(cli == api);
    CHECK(cli["seconds"].get<double>() / 86400 == Approx(143.93).epsilon(1e-4));
    CHECK(run_cli("time --params 70e9 --tokens 15e12 --gpus 0 --peak-tflops 989.5 --mfu 0.5").first == 2);
    CHECK(run_cli("time --bogus 1").first == 2);
}

TEST_CASE("the CLI's memory --json prints integer per_gpu_bytes; bad flags exit with status 2") {
    auto [status, out] = run_cli("memory --model llama-2-7b --gpus 8 --zero 1 --seq 4096 --json");
    REQUIRE(status == 0);
    const json r = json::parse(out);
    CHECK(r["per_gpu_bytes"]["weights"] == 2 * 6'738'415'616ull);
    CHECK(r["per_gpu_bytes"]["optimizer_states"] == 8 * 6'738'415'616ull / 8);
    CHECK(run_cli("params --model gpt2-small --json").second.find("124439808") != std::string::npos);
    CHECK(run_cli("memory --model llama-2-7b --zero 5").first == 2);
    CHECK(run_cli("memory --model llama-2-7b --gpus 6 --tp 4").first == 2);
    CHECK(run_cli("flops --model nope").first == 2);
    CHECK(run_cli("params --config /nonexistent/config.json").first == 2);
    CHECK(run_cli("memory --model llama-2-7b --bogus 1").first == 2);
    CHECK(run_cli("memory --model llama-2-7b --seq inf").first == 2);
}

TEST_CASE(
    "tally kv-cache prints one row per kind of layer: gpt-oss-120b's 18 full and 18 windowed, DeepSeek-V3's latent") {
    // gpt-oss model card sec. 2.1: K and V of 8 heads of 64 in bf16 = 2,048 B a layer a token; windows of 128.
    auto [status, out] = run_cli("kv-cache --model gpt-oss-120b --context 131072");
    REQUIRE(status == 0);
    CHECK(out.find("18 full layers (K 512 + V 512)") != std::string::npos);
    CHECK(out.find("2,048 B per token each, 131,072 tokens kept") != std::string::npos);
    CHECK(out.find("18 windowed layers (K 512 + V 512)") != std::string::npos);
    CHECK(out.find("2,048 B per token each, 128 tokens kept") != std::string::npos);
    // DeepSeek-V2 sec. 2.1.2: 512 + 64 values a layer, 1,152 B in bf16.
    const std::string ds = run_cli("kv-cache --model deepseek-v3 --context 4096").second;
    CHECK(ds.find("61 full layers (latent 512 + RoPE key 64)") != std::string::npos);
    CHECK(ds.find("1,152 B per token each, 4,096 tokens kept") != std::string::npos);
}

TEST_CASE("tally fit's largest model honours --zero and --tp: the ZeRO paper's Table 2, 7.6B and 121.6B at stage 1") {
    // Rajbhandari et al. 2020, Table 2: 64 × 32 GB V100s, Pos (ZeRO 1): 7.6B at MP 1, 121.6B at MP 16 on 1024.
    auto [status, out] = run_cli("fit --gpus 64 --capacity-bytes 32e9 --zero 1 --json");
    REQUIRE(status == 0);
    CHECK(json::parse(out)["max_params"] == 64 * 32'000'000'000ull / 268);  // 7.64e9
    auto [status16, out16] = run_cli("fit --gpus 1024 --tp 16 --capacity-bytes 32e9 --zero 1 --json");
    REQUIRE(status16 == 0);
    CHECK(json::parse(out16)["max_params"].get<double>() == Approx(121.6e9).epsilon(0.01));
    // With a model, the activation settings apply too (largest depth at that seq).
    CHECK(
        run_cli("fit --mode largest_model --model llama-2-7b --gpus 8 --hardware h100-sxm --zero 3 --seq 4096").first ==
        0);
}

TEST_CASE("tally time --recompute full gives Narayanan et al.'s Eq. (3) for GPT-3 175B: 4.30e23 FLOPs on 300B tokens") {
    // Narayanan et al. 2021 (arXiv:2104.04473), sec. 5.1, Eq. (3): with activation recomputation a step costs
    // 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) FLOPs: four passes of every layer, three of the LM head.
    const double l = 96, h = 12288, s = 2048, V = 50257;
    const double per_token = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    auto [status, out] = run_cli(
        "time --model gpt3-175b --seq 2048 --recompute full --tokens 300e9 --gpus 1024 "
        "--mfu 0.5 --hardware a100-80gb --json");
    REQUIRE(status == 0);
    CHECK(json::parse(out)["total_flops"].get<double>() == Approx(per_token * 300e9).epsilon(1e-12));
}

TEST_CASE("the CLI reads a Hugging Face config.json or a tally config from --config") {
    const std::string dir = std::string(tally_test::source_dir()) + "/engine/fuzz/corpus/";
    auto [status, out] = run_cli("params --config " + dir + "gpt2.json --json");
    REQUIRE(status == 0);
    CHECK(json::parse(out)["total"] == 124'439'808);
    auto [status2, out2] = run_cli("params --config " + dir + "tally_config.json --json");
    REQUIRE(status2 == 0);
    CHECK(json::parse(out2)["total"] == 46'702'792'704ull);  // the Mixtral shape
}

TEST_CASE("every command's --json prints exactly the result of the API method of the same name, defaults included") {
    struct Row {
        const char* words;
        const char* method;
        json args;
    };
    const Row rows[] = {
        {"time --params 7e9 --tokens 1e12 --gpus 8 --hardware h100-sxm --mfu 0.4 --json",
         "training_cost",
         {{"params", 7e9}, {"tokens", 1e12}, {"gpus", 8}, {"hardware", "h100-sxm"}, {"mfu", 0.4}}},
        {"mfu --model llama-2-7b --tokens-per-second 3000 --gpus 8 --hardware h100-sxm --json",
         "mfu",
         {{"model", "llama-2-7b"}, {"tokens_per_second", 3000}, {"gpus", 8}, {"hardware", "h100-sxm"}}},
        {"params --model gpt2-small --json", "params", {{"model", "gpt2-small"}}},
        {"flops --model llama-2-7b --json", "flops", {{"model", "llama-2-7b"}}},
        {"memory --model llama-2-7b --json", "memory_budget", {{"model", "llama-2-7b"}}},
        // fit without --mode: the engine's default (fewest GPUs for a given model), not one the CLI picks
        {"fit --model llama-2-7b --hardware h100-sxm --json",
         "fit",
         {{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}}},
        {"fit --gpus 8 --hardware h100-sxm --json", "fit", {{"gpus", 8}, {"hardware", "h100-sxm"}}},
        {"kv-cache --model llama-2-7b --context 4096 --json", "kv_cache", {{"model", "llama-2-7b"}, {"context", 4096}}},
        {"presets --json", "presets", json::object()},
        {"step --model llama-2-7b --hardware h100-sxm --gpus 8 --json",
         "step_time",
         {{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"gpus", 8}}},
    };
    for (const Row& row : rows) {
        INFO(row.words);
        const auto [status, out] = run_cli(row.words);
        REQUIRE(status == 0);
        const json api = json::parse(tally::api::call(row.method, row.args.dump()));
        REQUIRE(api["ok"] == true);
        CHECK(json::parse(out) == api["result"]);
    }
}

TEST_CASE("tally float rounds 500 to E4M3's largest finite value 448 and decodes 0x7e to the same value") {
    const auto [status, out] = run_cli("float --format e4m3 --value 500 --json");
    REQUIRE(status == 0);
    const json encoded = json::parse(out);
    CHECK(encoded["code"] == 126);  // 0x7e: E4M3 saturates to 448 (OCP FP8 spec, Table 1)
    CHECK(encoded["value"] == 448.0);
    const auto [status2, out2] = run_cli("float --format e4m3 --code 0x7e --json");
    REQUIRE(status2 == 0);
    CHECK(json::parse(out2)["value"] == 448.0);
    CHECK(run_cli("float --format e9m9 --value 1").first == 2);
    CHECK(run_cli("float --all --value 1e-8 --json").first == 0);
}

TEST_CASE(
    "tally bench gemm times the kernels it is asked for, checks them against the reference, and rejects bad sizes") {
    const auto [status, out] =
        run_cli("bench gemm --n 32 --kernel naive,ikj --reps 1 --warmup 0 --min-sample-ms 1 --json");
    REQUIRE(status == 0);
    const json r = json::parse(out);
    REQUIRE(r["rows"].size() == 2);
    for (const json& row : r["rows"]) {
        CHECK(row["n"] == 32);
        CHECK(row["correct"] == true);
        CHECK(row["flops_per_s"].get<double>() > 0);
        CHECK(row["flops"].get<double>() == 2.0 * 32 * 32 * 32);
    }
    CHECK(run_cli("bench gemm --n 0 --json").first == 2);
    CHECK(run_cli("bench gemm --kernel nope --json").first == 2);
    CHECK(run_cli("bench nothing").first == 2);
}

TEST_CASE("tally bench probe measures a positive peak and bandwidth on a small buffer") {
    const auto [status, out] = run_cli("bench probe --mib 1 --reps 1 --json");
    REQUIRE(status == 0);
    const json r = json::parse(out);
    INFO(out);
    CHECK(r["peak"]["flops_per_s"].get<double>() > 0);
    CHECK(r["bandwidth"]["read_bytes_per_s"].get<double>() > 0);
    CHECK(r["bandwidth"]["bytes"] == 1 << 20);
}

// ---------------------------------------------------------------- flags against API arguments
// Every argument an accounting API method reads has a flag on its CLI command, and every flag sets an
// argument the method reads. Both lists are derived, not written down: the CLI's from its option
// tables (engine/cli), the API's by probing: an argument is read when setting it to an ill-typed value
// ([]) makes the method fail with an error naming it. Candidates are the string literals of the API sources.
namespace {

using nlohmann::json;

std::set<std::string> candidate_keys() {
    std::set<std::string> keys;
    // Every API source: the methods' files and the shared argument readers.
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(tally_test::source_dir()) + "/engine/api")) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(".cpp")) continue;
        std::ifstream in(entry.path());
        REQUIRE(in);
        std::stringstream text;
        text << in.rdbuf();
        const std::string source = text.str();
        const std::regex literal("\"([a-z][a-z0-9_]*)\"");
        for (auto it = std::sregex_iterator(source.begin(), source.end(), literal); it != std::sregex_iterator(); ++it)
            keys.insert((*it)[1].str());
    }
    // And every declared argument: a shared declaration (api_args.h) or a result built from member names
    // (TALLY_MEMBERS) leaves no literal of the name in a .cpp.
    for (const json& method : tally::api::list_methods(true))
        for (const json& arg : method["args"]) keys.insert(arg["name"].get<std::string>());
    return keys;
}

// Arguments `method` reads from any of the (valid) base argument sets.
std::set<std::string> api_arguments(const char* method, const std::vector<json>& bases) {
    std::set<std::string> read;
    std::vector<json> all = bases;
    for (const json& base : bases)
        if (base.contains("model")) {  // the same base with the model given as a config.json
            json hf = base;
            hf.erase("model");
            hf["hf_config"] = {{"model_type", "gpt2"}, {"n_embd", 768},       {"n_layer", 12},
                               {"n_head", 12},         {"vocab_size", 50257}, {"n_positions", 1024}};
            all.push_back(hf);
        }
    for (const json& base : all) {
        REQUIRE_NOTHROW(tally::api::invoke(method, base));
        for (const std::string& key : candidate_keys()) {
            json args = base;
            args[key] = json::array();
            // The method's own function, past invoke()'s check of the declaration: what the code reads.
            try {
                tally::api::find_method(method)->fn(args);
            } catch (const tally::InputError& error) {
                if (error.field() == key) read.insert(key);
            }
        }
    }
    return read;
}

// The API arguments the CLI command's flags set (the CLI maps --config, --no-dropout, --no-cp-load-balance itself).
std::set<std::string> cli_arguments(std::span<const tally::cli::Option> options) {
    std::set<std::string> keys;
    for (const auto& option : options) {
        const std::string key = option.key;
        if (key == "config_path") {
            keys.insert("model");
            keys.insert("hf_config");
        } else if (key == "no_dropout" || key == "dropout_on") {
            keys.insert("dropout");
        } else if (key == "no_cp_load_balance") {  // --no-cp-load-balance sets cp_load_balance false
            keys.insert("cp_load_balance");
        } else if (key == "predict_mfu") {  // --predict-mfu sets mfu to "predicted"
            keys.insert("mfu");
        } else {
            keys.insert(key);
        }
    }
    return keys;
}

// `flag_only_bases`: modes in which a flag may be read (e.g. mfu "predicted" passes the layout on to
// step_time, whose own flags are on `tally step`); their arguments need no flag on this command.
void compare(const char* command, const char* method, std::span<const tally::cli::Option> options,
             const std::vector<json>& bases, const std::vector<json>& flag_only_bases = {}) {
    const std::set<std::string> api = api_arguments(method, bases);
    std::set<std::string> read_somewhere = api;
    if (!flag_only_bases.empty())
        for (const std::string& key : api_arguments(method, flag_only_bases)) read_somewhere.insert(key);
    const std::set<std::string> cli = cli_arguments(options);
    REQUIRE(!options.empty());
    // The declaration is complete: every argument the code reads is declared (so invoke() accepts it).
    const tally::api::Method* declared = tally::api::find_method(method);
    for (const std::string& key : read_somewhere) {
        INFO(method << " reads an argument it does not declare: " << key);
        CHECK(std::any_of(declared->args.begin(), declared->args.end(),
                          [&](const tally::api::Arg& arg) { return key == arg.name; }));
    }
    for (const std::string& key : api) {
        INFO("API argument of " << method << " without a flag on `tally " << command << "`: " << key);
        CHECK(cli.count(key) == 1);
    }
    for (const std::string& key : cli) {
        INFO("flag of `tally " << command << "` that " << method << " never reads: " << key);
        CHECK(read_somewhere.count(key) == 1);
    }
}

const json kModel = {{"model", "gpt2-small"}};

json with(json base, const json& extra) {
    base.update(extra);
    return base;
}

}  // namespace

TEST_CASE("tally time and training_cost take the same arguments (recompute and attention flops included)") {
    const json peak = {{"tokens", 1e9}, {"gpus", 8}, {"mfu", 0.4}, {"hardware", "h100-sxm"}};
    compare("time", "training_cost", tally::cli::time_options("time"),
            {with(peak, kModel), with(peak, {{"params", 1e9}}), with(with(peak, kModel), {{"recompute_layers", 1}}),
             with(with(peak, kModel), {{"peak_tflops", 900}}), with(peak, {{"params", 1e9}, {"peak_tflops", 900}})},
            {with(with(peak, kModel), {{"mfu", "predicted"}})});
}

TEST_CASE("tally mfu and the mfu method take the same arguments") {
    const json peak = {{"tokens_per_second", 1e5}, {"gpus", 8}, {"hardware", "h100-sxm"}};
    compare("mfu", "mfu", tally::cli::time_options("mfu"),
            {with(peak, kModel), with(peak, {{"params", 1e9}}), with(with(peak, kModel), {{"recompute_layers", 1}}),
             with(with(peak, kModel), {{"peak_tflops", 900}}), with(peak, {{"params", 1e9}, {"peak_tflops", 900}})});
}

TEST_CASE("tally params, flops and kv-cache take the same arguments as their API methods") {
    compare("params", "params", tally::cli::accounting_options("params"), {kModel});
    compare("flops", "flops", tally::cli::accounting_options("flops"),
            {kModel, with(kModel, {{"recompute_layers", 1}})});
    compare("kv-cache", "kv_cache", tally::cli::accounting_options("kv-cache"),
            {with(kModel, {{"context", 1024}}), with(kModel, {{"context", 1024}, {"hardware", "h100-sxm"}})});
}

TEST_CASE("tally memory and tally fit take the same arguments as memory_budget and fit") {
    compare("memory", "memory_budget", tally::cli::accounting_options("memory"),
            {kModel, with(kModel, {{"hardware", "h100-sxm"}})});
    compare("fit", "fit", tally::cli::accounting_options("fit"),
            {{{"mode", "largest_model"}, {"gpus", 8}, {"hardware", "h100-sxm"}},
             with(kModel, {{"mode", "largest_model"}, {"gpus", 8}, {"hardware", "h100-sxm"}}),
             with(kModel, {{"mode", "min_gpus"}, {"hardware", "h100-sxm"}})});
}

TEST_CASE("tally finetune takes the same arguments as the finetune method") {
    compare("finetune", "finetune", tally::cli::accounting_options("finetune"),
            {kModel, with(kModel, {{"hardware", "h100-sxm"}}), with(kModel, {{"method", "qlora"}})});
}

TEST_CASE("tally finetune prints exactly the finetune method's result with --json") {
    const auto [status, out] =
        run_cli("finetune --model llama-3-8b --lora-rank 16 --lora-targets all-linear --method qlora --json");
    REQUIRE(status == 0);
    const json expected = tally::api::invoke(
        "finetune", {{"model", "llama-3-8b"}, {"lora_rank", 16}, {"lora_targets", "all-linear"}, {"method", "qlora"}});
    CHECK(json::parse(out) == expected);
    CHECK(expected["lora"]["params"] == 41'943'040);
    const CliRun bad = run_cli_argv({"finetune", "--model", "llama-3-8b", "--lora-rank", "5000"});
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--lora-rank must be a whole number in [1, 1024]"));
}

TEST_CASE("tally finetune with --optimizer-in-backward prints the two moments of the step and the offloaded bytes") {
    const auto [status, out] = run_cli(
        "finetune --model llama-2-7b --method full --recipe bf16_pure_adamw --recompute full --optimizer-in-backward "
        "--loss-chunks 8 --activation-offloading");
    REQUIRE(status == 0);
    const json r = tally::api::invoke("finetune", {{"model", "llama-2-7b"},
                                                   {"method", "full"},
                                                   {"recipe", "bf16_pure_adamw"},
                                                   {"recompute", "full"},
                                                   {"optimizer_in_backward", true},
                                                   {"loss_chunks", 8},
                                                   {"activation_offloading", true}});
    CHECK(r["peak_phase"] == "backward_start");
    CHECK_THAT(out, Catch::Contains("peak at") && Catch::Contains("backward_start") &&
                        Catch::Contains("checkpoints offloaded to host"));
    CHECK_THAT(out, Catch::Contains(tally::cli::human_integer(r["backward_end_bytes"].get<unsigned long long>())));
}

TEST_CASE(
    "tally step and tally plan take --encoder-head and --decoder-seq and print exactly step_time's and plan's result") {
    const std::string dir = fixtures() + "/";
    auto text = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream all;
        all << in.rdbuf();
        return all.str();
    };
    const json base = {{"hardware", "a100-80gb"}, {"gpus", 8}, {"seq", 512}, {"global_batch", 64}};
    const std::string flags = " --hardware a100-80gb --gpus 8 --seq 512 --global-batch 64 --json";
    struct Row {
        std::string words;
        const char* method;
        json args;
    };
    const Row rows[] = {
        {"step --config " + dir + "t5_small.json --decoder-seq 114" + flags, "step_time",
         with(base, {{"hf_config", text(dir + "t5_small.json")}, {"decoder_seq", 114}})},
        {"step --config " + dir + "bert_base.json --encoder-head masked_lm" + flags, "step_time",
         with(base, {{"hf_config", text(dir + "bert_base.json")}, {"encoder_head", "masked_lm"}})},
        {"plan --config " + dir + "bert_base.json --encoder-head pretraining --top 3" + flags, "plan",
         with(base, {{"hf_config", text(dir + "bert_base.json")}, {"encoder_head", "pretraining"}, {"top", 3}})},
        {"plan --config " + dir + "t5_small.json --decoder-seq 114 --top 3" + flags, "plan",
         with(base, {{"hf_config", text(dir + "t5_small.json")}, {"decoder_seq", 114}, {"top", 3}})},
    };
    for (const Row& row : rows) {
        INFO(row.words);
        const auto [status, out] = run_cli(row.words);
        REQUIRE(status == 0);
        const json api = json::parse(tally::api::call(row.method, row.args.dump()));
        REQUIRE(api["ok"] == true);
        CHECK(json::parse(out) == api["result"]);
    }
    // The target length changes the step (fewer decoder positions, less work), and the table says so.
    const auto [status, table] =
        run_cli("step --config " + dir + "t5_small.json --decoder-seq 114 --hardware a100-80gb --gpus 8");
    CHECK(status == 0);
    CHECK(table.find("MFU") != std::string::npos);
    CHECK(run_cli("step --model llama-2-7b --hardware h100-sxm --gpus 8 --decoder-seq 100").first == 2);
    CHECK(run_cli("plan --model llama-2-7b --hardware h100-sxm --gpus 8 --encoder-head masked_lm").first == 2);
}

TEST_CASE("the CLI takes the block-scaled KV formats and the fp4 peak of a Blackwell Ultra rack") {
    auto [status, out] = run_cli("kv-cache --model llama-2-7b --context 1 --kv-dtype nvfp4 --json");
    REQUIRE(status == 0);
    CHECK(json::parse(out)["bytes_per_token"] == 147'456);  // 262,144 values · 4.5 bits
    auto [time_status, time_out] =
        run_cli("time --params 70e9 --tokens 15e12 --gpus 72 --hardware gb300-nvl72 --dtype fp4 --mfu 0.5 --json");
    REQUIRE(time_status == 0);
    CHECK(json::parse(time_out)["peak_flops_per_s"] == 15e15);  // NVIDIA GB300 NVL72: 1,080 PFLOPS dense / 72
    // A chip without the mode: exit 2 and a message naming the flag and the missing peak.
    const auto bad = run_cli_argv({"time", "--params", "70e9", "--tokens", "15e12", "--gpus", "8", "--hardware", "h200",
                                   "--dtype", "fp4", "--mfu", "0.5"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("no dense fp4 peak") != std::string::npos);
    CHECK(bad.err.find("(--dtype)") != std::string::npos);
}

namespace {

// The flag a declaration names: Arg.flag, or --<name with - for _>.
std::string declared_flag(const tally::api::Arg& arg) {
    if (arg.flag != nullptr) return arg.flag;
    std::string flag = std::string("--") + arg.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

// The option kinds that can carry a value of the declared type (a Boolean may be a switch or true/false text).
bool kind_fits(tally::cli::Kind kind, tally::api::ArgType type) {
    using tally::api::ArgType;
    using tally::cli::Kind;
    switch (type) {
        case ArgType::Integer: return kind == Kind::Integer;
        case ArgType::Number: return kind == Kind::Number;
        case ArgType::Boolean: return kind == Kind::Flag || kind == Kind::String;
        case ArgType::String:
        case ArgType::Enum:
        case ArgType::Object:
        case ArgType::Array: return kind == Kind::String;
        case ArgType::Any: return kind != Kind::Flag;
    }
    return false;
}

// Each command with a generated option table: its name, its API method and the table.
std::vector<std::tuple<const char*, const char*, std::span<const tally::cli::Option>>> option_tables() {
    return {
        {"time", "training_cost", tally::cli::time_options("time")},
        {"mfu", "mfu", tally::cli::time_options("mfu")},
        {"params", "params", tally::cli::accounting_options("params")},
        {"flops", "flops", tally::cli::accounting_options("flops")},
        {"memory", "memory_budget", tally::cli::accounting_options("memory")},
        {"fit", "fit", tally::cli::accounting_options("fit")},
        {"finetune", "finetune", tally::cli::accounting_options("finetune")},
        {"kv-cache", "kv_cache", tally::cli::accounting_options("kv-cache")},
        {"step", "step_time", tally::cli::step_options("step")},
        {"plan", "plan", tally::cli::step_options("plan")},
    };
}

}  // namespace

TEST_CASE("every CLI option of a declared argument takes its help from the declaration and agrees with its flag") {
    int declared_options = 0;
    for (const auto& [command, method, options] : option_tables()) {
        const tally::api::Method* m = tally::api::find_method(method);
        REQUIRE(m != nullptr);
        REQUIRE(!options.empty());
        for (const tally::cli::Option& option : options) {
            const auto arg = std::find_if(m->args.begin(), m->args.end(),
                                          [&](const tally::api::Arg& a) { return std::string(a.name) == option.key; });
            if (arg == m->args.end()) {
                INFO("`tally " << command << "` " << option.flag << ": a CLI-only option needs its own help");
                CHECK(option.help != nullptr);
                continue;
            }
            ++declared_options;
            INFO("`tally " << command << "` " << option.flag << " sets " << method << "'s declared " << option.key);
            REQUIRE(option.help != nullptr);
            CHECK(std::string(option.help) == tally::cli::declared_help(method, option.key));
            CHECK(option.flag == declared_flag(*arg));
            CHECK(kind_fits(option.kind, arg->type));
            CHECK(!tally::cli::declared_help(method, option.key).empty());
        }
    }
    CHECK(declared_options > 100);
}

TEST_CASE("every argument a command's method declares is one of its flags unless the command sets it another way") {
    // The arguments each command sets through a CLI-only option or its own search (cmd_*.cpp's Replace lists).
    const std::set<std::string> other_way = {"hf_config", "dropout", "cp_load_balance", "overlap_grad_reduce"};
    const std::set<std::string> plan_searches = {"tp",        "pp",         "zero",           "micro_batch",
                                                 "recompute", "interleave", "virtual_stages", "sequence_parallel"};
    for (const auto& [command, method, options] : option_tables()) {
        const tally::api::Method* m = tally::api::find_method(method);
        REQUIRE(m != nullptr);
        for (const tally::api::Arg& arg : m->args) {
            if (arg.type == tally::api::ArgType::Object || other_way.count(arg.name) != 0) continue;
            if (std::string(command) == "plan" && plan_searches.count(arg.name) != 0) continue;
            INFO("`tally " << command << "` sets " << method << "'s declared " << arg.name);
            const auto option = std::find_if(options.begin(), options.end(), [&](const tally::cli::Option& o) {
                return std::string(o.key) == arg.name;
            });
            REQUIRE(option != options.end());
            CHECK(option->flag == declared_flag(arg));
        }
    }
    // plan's searched arguments take no flag: a value given would be overwritten by the search.
    for (const tally::cli::Option& option : tally::cli::step_options("plan"))
        CHECK(plan_searches.count(option.key) == 0);
}

TEST_CASE("tally <command> --help prints each declared option's range and allowed values") {
    const auto [status, out] = run_cli("memory --help");
    REQUIRE(status == 0);
    CHECK_THAT(out, Catch::Contains("--zero X") && Catch::Contains("3 +weights, in [0, 3] (default 0)"));
    CHECK_THAT(out, Catch::Contains("--activation-bytes X") && Catch::Contains("(bytes), in [1, 4] (default 2)"));
    CHECK_THAT(out,
               Catch::Contains("--recompute NAME") && Catch::Contains("activation recomputation: none|selective|full"));
    const auto time = run_cli("time --help");
    REQUIRE(time.first == 0);
    CHECK_THAT(time.second,
               Catch::Contains("--tokens X") && Catch::Contains("training tokens (tokens), above 0 (required)"));
}

TEST_CASE(
    "a flag generated from a declaration reaches the engine; time refuses step-model flags without --predict-mfu") {
    // --activation-bytes had no flag in tally step before its options were generated from step_time's declaration.
    const auto [status, out] =
        run_cli("step --model llama-2-7b --hardware h100-sxm --gpus 16 --tp 2 --activation-bytes 4 --json");
    REQUIRE(status == 0);
    const json base = {{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"gpus", 16}, {"tp", 2}};
    json wider = base;
    wider["activation_bytes"] = 4;
    const json expected = tally::api::invoke("step_time", wider);
    CHECK(json::parse(out) == expected);
    CHECK(expected["memory_bytes"] != tally::api::invoke("step_time", base)["memory_bytes"]);
    // A declared argument the step model refuses for now says so, naming the flag.
    const CliRun offload = run_cli_argv({"step", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--gpus", "16",
                                         "--tp", "2", "--offload", "optimizer"});
    CHECK(offload.exit_code == 2);
    CHECK_THAT(offload.err, Catch::Contains("--offload is read by memory_budget and fit"));
    const CliRun bad = run_cli_argv({"time", "--model", "llama-2-7b", "--tokens", "1e12", "--gpus", "8", "--hardware",
                                     "h100-sxm", "--mfu", "0.4", "--recipe", "fp32_adamw"});
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--recipe applies only with --predict-mfu"));
}

TEST_CASE("tally float --help lists the engine's formats and float_explore's declared rounding modes") {
    const auto [status, out] = run_cli("float --help");
    REQUIRE(status == 0);
    const json table = tally::api::invoke("float_formats", json::object());
    for (const auto& f : table["formats"]) CHECK_THAT(out, Catch::Contains(" " + f["name"].get<std::string>()));
    CHECK_THAT(out,
               Catch::Contains("--rounding NAME") && Catch::Contains("nearest_even|nearest_away|toward_zero|up|down"));
    CHECK_THAT(out,
               Catch::Contains("--code NAME") && Catch::Contains(tally::cli::declared_help("float_explore", "hex")));
    CHECK_THAT(out, Catch::Contains("--flip-bit X") &&
                        Catch::Contains(tally::cli::declared_help("float_explore", "flip_bit")));
    const CliRun missing = run_cli_argv({"float", "--value", "1"});
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Catch::Contains("--format is required (fp64 fp32"));
}

TEST_CASE("tally <command> --help prints the declaration's doc and default for a declared option") {
    const auto [status, out] = run_cli("memory --help");
    REQUIRE(status == 0);
    const tally::api::Method* m = tally::api::find_method("memory_budget");
    REQUIRE(m != nullptr);
    for (const tally::cli::Option& option : tally::cli::accounting_options("memory")) {
        INFO(option.flag);
        CHECK_THAT(out, Catch::Contains(option.flag));
        if (option.help == nullptr)
            CHECK_THAT(out, Catch::Contains(tally::cli::declared_help("memory_budget", option.key)));
    }
}

TEST_CASE("tally help COMMAND prints that command's --help and exits 0, as git help does; a wrong name exits 2") {
    for (const char* command : {"step", "plan", "call", "methods", "float"}) {
        INFO(command);
        const CliRun help = run_cli_argv({"help", command});
        const CliRun flag = run_cli_argv({command, "--help"});
        CHECK(help.exit_code == 0);
        CHECK(flag.exit_code == 0);
        CHECK(help.out == flag.out);
        CHECK_FALSE(help.out.empty());
    }
    const CliRun overview = run_cli_argv({"help"});
    CHECK(overview.exit_code == 0);
    CHECK_THAT(overview.out, Catch::Contains("Commands:"));
    const CliRun unknown = run_cli_argv({"help", "stepp"});
    CHECK(unknown.exit_code == 2);
    CHECK_THAT(unknown.err, Catch::Contains("unknown command \"stepp\""));
    CHECK(run_cli_argv({"help", "step", "plan"}).exit_code == 2);
}
