// Every argument an accounting API method reads has a flag on its CLI command, and every flag sets an
// argument the method reads. Both lists are derived, not written down: the CLI's from its option
// tables (engine/cli), the API's by probing: an argument is read when setting it to an ill-typed value
// ([]) makes the method fail with an error naming it. Candidates are the string literals of the API sources.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../../engine/cli/commands.h"
#include "tally/api.h"
#include "tally/error.h"

namespace {

using nlohmann::json;

std::set<std::string> candidate_keys() {
    std::set<std::string> keys;
    for (const char* file : {"/engine/src/api_accounting.cpp", "/engine/src/api.cpp", "/engine/src/api_step.cpp"}) {
        std::ifstream in(std::string(TALLY_SOURCE_DIR) + file);
        REQUIRE(in);
        std::stringstream text;
        text << in.rdbuf();
        const std::string source = text.str();
        const std::regex literal("\"([a-z][a-z0-9_]*)\"");
        for (auto it = std::sregex_iterator(source.begin(), source.end(), literal); it != std::sregex_iterator(); ++it)
            keys.insert((*it)[1].str());
    }
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
            hf["hf_config"] = {{"model_type", "gpt2"}, {"n_embd", 768}, {"n_layer", 12}, {"n_head", 12},
                               {"vocab_size", 50257}, {"n_positions", 1024}};
            all.push_back(hf);
        }
    for (const json& base : all) {
        REQUIRE_NOTHROW(tally::api::invoke(method, base));
        for (const std::string& key : candidate_keys()) {
            json args = base;
            args[key] = json::array();
            try {
                tally::api::invoke(method, args);
            } catch (const tally::InputError& error) {
                if (error.field() == key) read.insert(key);
            }
        }
    }
    return read;
}

// The API arguments the CLI command's flags set (the CLI maps --config and --no-dropout itself).
std::set<std::string> cli_arguments(std::span<const tally::cli::Option> options) {
    std::set<std::string> keys;
    for (const auto& option : options) {
        const std::string key = option.key;
        if (key == "config_path") {
            keys.insert("model");
            keys.insert("hf_config");
        } else if (key == "no_dropout" || key == "dropout_on") {
            keys.insert("dropout");
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
    compare("flops", "flops", tally::cli::accounting_options("flops"), {kModel, with(kModel, {{"recompute_layers", 1}})});
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
