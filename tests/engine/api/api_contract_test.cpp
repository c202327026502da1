// The contract as data: every method declares its arguments and result fields, and invoke() checks a call
// against that declaration (undeclared keys, types, static ranges) before the method runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "api_helpers.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/base/error.h"
#include "tally/comm/overlap.h"

using nlohmann::json;
using tally::api::Arg;
using tally::api::ArgType;
using tally_test::error;
using tally_test::ok;

namespace {

const Arg& declared(const char* method, const char* name) {
    const tally::api::Method* m = tally::api::find_method(method);
    REQUIRE(m != nullptr);
    for (const Arg& arg : m->args)
        if (std::string(arg.name) == name) return arg;
    FAIL(std::string(method) + " does not declare " + name);
    throw;  // unreachable
}

bool numeric(const char* text) {
    char* end = nullptr;
    std::strtod(text, &end);
    return end != text && *end == '\0';
}

json legacy_fn(const json& args) { return args; }

}  // namespace

TEST_CASE("every method declares its arguments and result fields", "[api][contract]") {
    std::string undeclared;
    for (const json& row : tally::api::list_methods(true)) {
        if (!row["declared"].get<bool>()) undeclared += " " + row["name"].get<std::string>();
        if (row["declared"].get<bool>()) {
            INFO(row["name"]);
            CHECK(!row["result"].empty());
        }
    }
    // A method added the old way ({name, fn, summary}) builds and runs, and is named here until declared.
    INFO("methods without a declaration:" + undeclared);
    CHECK(undeclared.empty());
}

TEST_CASE("each declaration is well formed: unique names, a doc, a default, enum values, numeric defaults",
          "[api][contract]") {
    for (const json& row : tally::api::list_methods(true)) {
        const tally::api::Method* m = tally::api::find_method(row["name"].get<std::string>());
        REQUIRE(m != nullptr);
        std::set<std::string> names;
        for (const Arg& arg : m->args) {
            INFO(std::string(m->name) + "." + arg.name);
            CHECK(names.insert(arg.name).second);
            CHECK(std::string(arg.doc).size() > 3);
            if (arg.type == ArgType::Enum) {
                REQUIRE(arg.values != nullptr);
                const std::string fallback = arg.fallback;
                // An enum's literal default is one of its values.
                if (fallback != "required" && fallback.rfind("depends:", 0) != 0)
                    CHECK(("|" + std::string(arg.values) + "|").find("|" + fallback + "|") != std::string::npos);
            }
            if (arg.type == ArgType::Integer || arg.type == ArgType::Number) {
                const std::string fallback = tally::api::default_text(arg);
                const bool literal = fallback != "required" && fallback != "none" && fallback.rfind("depends:", 0) != 0;
                if (literal) {
                    REQUIRE(numeric(fallback.c_str()));
                    const double value = std::strtod(fallback.c_str(), nullptr);
                    // A literal default lies inside the declared range.
                    CHECK(value >= arg.low);
                    CHECK(value <= arg.high);
                }
            }
            if (arg.type == ArgType::Integer && std::isfinite(arg.low) && std::isfinite(arg.high))
                CHECK(arg.low <= arg.high);
        }
    }
}

TEST_CASE("an undeclared argument is refused, naming it and listing the accepted ones", "[api][contract]") {
    const json e = error("kv_cache", {{"model", "gpt2-small"}, {"context", 1024}, {"contxt", 5}});
    CHECK(e["field"] == "contxt");
    const std::string message = e["message"];
    CHECK(message.rfind("kv_cache takes no argument \"contxt\"; it accepts model, hf_config, encoder_head, context",
                        0) == 0);
    // Every declared name is listed.
    for (const Arg& arg : tally::api::find_method("kv_cache")->args) CHECK(message.find(arg.name) != std::string::npos);
    // A method without arguments says so.
    const json none = error("presets", {{"model", "gpt2-small"}});
    CHECK(none["field"] == "model");
    CHECK(none["message"] == "presets takes no argument \"model\"; it takes no arguments");
}

TEST_CASE("types and static ranges are checked from the declaration, with the readers' messages", "[api][contract]") {
    const Arg& stages = declared("pipeline_schedule", "stages");
    const auto high = static_cast<long long>(stages.high);
    const json above = error("pipeline_schedule", {{"stages", high + 1}});
    CHECK(above["field"] == "stages");
    CHECK(above["message"] == "stages must be a whole number in [" +
                                  std::to_string(static_cast<long long>(stages.low)) + ", " + std::to_string(high) +
                                  "], got " + std::to_string(high + 1));
    CHECK(ok("pipeline_schedule", {{"stages", high}, {"microbatches", 1}})["stages"] == high);

    const json text = error("pipeline_schedule", {{"stages", "four"}});
    CHECK(text["message"] == "stages must be a finite number in decimal or scientific notation, got \"four\"");
    const json kind = error("pipeline_schedule", {{"stages", json::array()}});
    CHECK(kind["message"] == "stages must be a number, got array");

    // A left-open number range (0, inf): the core's require_positive message.
    CHECK(declared("roofline_custom", "peak_flops_per_s").low_open);
    const json peak = error("roofline_custom", {{"peak_flops_per_s", -1}, {"bandwidth_bytes_per_s", 1e12}});
    CHECK(peak["field"] == "peak_flops_per_s");
    CHECK(peak["message"] == "peak_flops_per_s must be a finite number > 0, got -1");

    const json flag = error("methods", {{"detail", "maybe"}});
    CHECK(flag["field"] == "detail");
    CHECK(flag["message"] == "detail must be true or false");
}

TEST_CASE("null is an absent argument: the declared default applies", "[api][contract]") {
    const json r = ok("kv_cache", {{"model", "gpt2-small"}, {"context", 1024}, {"batch", nullptr}});
    CHECK(r["batch"] == std::strtoll(declared("kv_cache", "batch").fallback, nullptr, 10));
}

TEST_CASE("the readers take their defaults from the declaration", "[api][contract]") {
    const json r = ok("pipeline_schedule", json::object());
    CHECK(r["schedule"] == declared("pipeline_schedule", "schedule").fallback);
    CHECK(r["stages"] == std::strtoll(declared("pipeline_schedule", "stages").fallback, nullptr, 10));
    CHECK(r["microbatches"] == std::strtoll(declared("pipeline_schedule", "microbatches").fallback, nullptr, 10));
    const json budget = ok("memory_budget", {{"model", "gpt2-small"}});
    CHECK(budget["setup"]["seq"] == std::strtoll(declared("memory_budget", "seq").fallback, nullptr, 10));
    // comm_roofline states the core's defaults (collectives.h) in its declaration.
    const tally::collectives::RooflineInput core;
    CHECK(std::strtoll(declared("comm_roofline", "seq").fallback, nullptr, 10) == core.seq);
    CHECK(std::strtoll(declared("comm_roofline", "micro_batch").fallback, nullptr, 10) == core.micro_batch);
    CHECK(std::strtoll(declared("comm_roofline", "degree").fallback, nullptr, 10) == core.degree);
    CHECK(std::strtod(declared("collective", "efficiency").fallback, nullptr) ==
          tally::collectives::kDefaultLinkEfficiency);
}

TEST_CASE("overlap declares the core's defaults as numbers, read from overlap::Input, and runs with them",
          "[api][contract]") {
    const tally::overlap::Input core;
    const json r = ok("overlap", json::object());
    const json decl = tally::api::list_methods(true);
    const auto row = std::find_if(decl.begin(), decl.end(), [](const json& m) { return m["name"] == "overlap"; });
    REQUIRE(row != decl.end());
    std::map<std::string, std::string> shown;
    for (const json& a : (*row)["args"]) shown[a["name"]] = a["default"];
    // No "depends: the core's default": the number itself, equal to the core's and to what the method used.
    for (const char* name : {"layers", "forward_seconds", "layer_bytes", "bucket_bytes", "chunks", "efficiency"}) {
        INFO(name);
        CHECK(numeric(shown[name].c_str()));
    }
    CHECK(std::strtod(shown["layers"].c_str(), nullptr) == static_cast<double>(core.layers));
    CHECK(std::strtod(shown["forward_seconds"].c_str(), nullptr) == core.forward_seconds);
    CHECK(std::strtod(shown["layer_bytes"].c_str(), nullptr) == core.layer_bytes);
    CHECK(std::strtod(shown["bucket_bytes"].c_str(), nullptr) == core.bucket_bytes);
    CHECK(std::strtod(shown["chunks"].c_str(), nullptr) == static_cast<double>(core.chunks));
    CHECK(std::strtod(shown["efficiency"].c_str(), nullptr) == tally::collectives::kDefaultLinkEfficiency);
    CHECK(r["layers"] == std::strtoll(shown["layers"].c_str(), nullptr, 10));
    CHECK(r["forward_seconds"] == std::strtod(shown["forward_seconds"].c_str(), nullptr));
    CHECK(r["layer_bytes"] == std::strtod(shown["layer_bytes"].c_str(), nullptr));
    CHECK(r["bucket_bytes"] == std::strtod(shown["bucket_bytes"].c_str(), nullptr));
    CHECK(r["chunks"] == std::strtoll(shown["chunks"].c_str(), nullptr, 10));
}

TEST_CASE("a method added the old way builds, runs and is not checked", "[api][contract]") {
    constexpr tally::api::Method legacy{"legacy", legacy_fn, "three fields, as before the declarations"};
    STATIC_REQUIRE(!legacy.declared);
    CHECK(legacy.args.empty());
    CHECK_NOTHROW(tally::api::check_declared_args(legacy, json{{"anything", 1}}));
}

TEST_CASE("methods with detail prints the declarations; declared_only keeps the declared keys", "[api][contract]") {
    const json list = ok("methods", {{"detail", true}});
    const auto it = std::find_if(list.begin(), list.end(), [](const json& m) { return m["name"] == "kv_cache"; });
    REQUIRE(it != list.end());
    const json& context = (*it)["args"][3];
    CHECK(context["name"] == "context");
    CHECK(context["type"] == "integer");
    CHECK(context["unit"] == "tokens");
    CHECK(context["default"] == "required");
    CHECK(context["low"] == 1);
    CHECK(context["flag"] == "--context");
    CHECK(declared("training_cost", "flash_attention").flag == std::string("--flash-attn"));
    // Without detail, names and summaries only.
    CHECK(!ok("methods", json::object())[0].contains("args"));

    const json kept =
        tally::api::declared_only({{"model", "gpt2-small"}, {"mfu", "predicted"}, {"tp", 2}}, "step_time");
    CHECK(kept == json{{"model", "gpt2-small"}, {"tp", 2}});
}

TEST_CASE("training_cost with a predicted MFU hands step_time only the arguments it declares", "[api][contract]") {
    const json r = ok("training_cost", {{"model", "gpt2-small"},
                                        {"tokens", 1e9},
                                        {"gpus", 8},
                                        {"mfu", "predicted"},
                                        {"hardware", "h100-sxm"},
                                        {"dollars_per_gpu_hour", 2}});
    CHECK(r["mfu_source"] == "predicted");
    CHECK(r["predicted_mfu"].get<double>() > 0);
}
