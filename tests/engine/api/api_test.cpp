// Tests of engine/api/api.cpp: the JSON envelope every front end shares.
#include <catch2/catch.hpp>

#include "api_helpers.h"

#include <cstdlib>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tally/api.h"
#include "tally/base/input.h"

using nlohmann::json;

TEST_CASE("call wraps a result in ok:true and the numbers match the C++ function") {
    const json out = json::parse(tally::api::call(
        "training_cost", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":0.5})"));
    REQUIRE(out["ok"] == true);
    CHECK(out["result"]["six_nd"].get<double>() == 6.0 * 70e9 * 15e12);
    CHECK(out["result"]["seconds"].get<double>() / 86400 == Approx(143.93).epsilon(1e-4));
}

TEST_CASE("call reports bad input as ok:false with the field, never throws") {
    const json bad_mfu = json::parse(tally::api::call(
        "training_cost", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":1.5})"));
    CHECK(bad_mfu["ok"] == false);
    CHECK(bad_mfu["error"]["field"] == "mfu");
    CHECK(bad_mfu["error"]["message"].get<std::string>().find("(0, 1]") != std::string::npos);

    const json missing = json::parse(tally::api::call("training_cost", R"({"params":70e9})"));
    CHECK(missing["error"]["field"] == "tokens");

    const json text = json::parse(tally::api::call("training_cost", R"({"params":"abc","tokens":1})"));
    CHECK(text["error"]["field"] == "params");

    const json fractional_gpus = json::parse(
        tally::api::call("training_cost", R"({"params":1e9,"tokens":1e9,"gpus":1.5,"peak_tflops":100,"mfu":0.5})"));
    CHECK(fractional_gpus["error"]["field"] == "gpus");

    const json malformed = json::parse(tally::api::call("training_cost", "{\"params\": 1,"));
    CHECK(malformed["error"]["field"] == "args");
    CHECK(malformed["error"]["message"].get<std::string>().find("column") != std::string::npos);  // parse position

    const json unknown = json::parse(tally::api::call("no_such_method", "{}"));
    CHECK(unknown["error"]["field"] == "method");
}

TEST_CASE("numeric strings are parsed strictly: \"70e9\" is a number, \"70e9x\" is not") {
    const json ok = json::parse(tally::api::call(
        "training_cost", R"({"params":"70e9","tokens":"15e12","gpus":"1024","peak_tflops":"989.5","mfu":"0.5"})"));
    CHECK(ok["ok"] == true);
    const json bad = json::parse(tally::api::call(
        "training_cost", R"({"params":"70e9x","tokens":"15e12","gpus":"1024","peak_tflops":"989.5","mfu":"0.5"})"));
    CHECK(bad["error"]["field"] == "params");
}

// ---------------------------------------------------------------- the boundary holds for any bytes
namespace {

json envelope_of(const std::string& method, const std::string& args) {
    std::string text;
    REQUIRE_NOTHROW(text = tally::api::call(method, args));
    const json parsed = json::parse(text, nullptr, false);
    REQUIRE_FALSE(parsed.is_discarded());
    return parsed;
}

bool has_control(const std::string& text) {
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
    return false;
}

}  // namespace

TEST_CASE("call returns an error envelope, never throws, for arguments that are not UTF-8 or not JSON") {
    // Malformed JSON with non-ASCII bytes made the error path throw while serialising the message.
    for (const std::string& bad : {std::string("\xc3\xa9"), std::string("\xe9"), std::string("{\"model\":\"caf\xe9\"}"),
                                   std::string("\xe2\x80\x9cmodel\xe2\x80\x9d: \xe2\x80\x9cgpt2\xe2\x80\x9d"),
                                   std::string("{\"model\":\"\xed\xa0\x80\"}"), std::string("{\"model\":\"\xc0\xaf\"}"),
                                   std::string("{\"model\":\"\\ud800\"}"), std::string("\xff\xfe{}")}) {
        INFO(bad);
        const json out = envelope_of("params", bad);
        CHECK(out["ok"] == false);
        CHECK(out["error"]["field"] == "args");
        CHECK_FALSE(has_control(out["error"]["message"].get<std::string>()));
    }
    CHECK(envelope_of("params", "{\"model\":\"caf\xe9\"}")["error"]["message"].get<std::string>().find(
              "UTF-8 at byte") == std::string::npos);
    CHECK(envelope_of("params", "{\"model\":\"caf\xe9\"}")["error"]["message"].get<std::string>().find("byte 13") !=
          std::string::npos);
}

TEST_CASE("call names the method field for a method name that is too long or not UTF-8") {
    CHECK(envelope_of("par\xffms", "{}")["error"]["field"] == "method");
    CHECK(envelope_of(std::string(100000, 'x'), "{}")["error"]["field"] == "method");
    CHECK(envelope_of(std::string(100000, 'x'), "{}")["error"]["message"].get<std::string>().size() < 400);
    CHECK_FALSE(has_control(envelope_of("params\x1b[2J", "{}")["error"]["message"].get<std::string>()));
}

TEST_CASE("call rejects nesting deeper than 64 before parsing: a 60,000-deep shape used to overflow the stack") {
    const std::string deep = std::string(60000, '[') + std::string(60000, ']');
    const json out = envelope_of("tensor_bytes", "{\"dtype\":\"bf16\",\"shape\":" + deep + "}");
    CHECK(out["error"]["field"] == "args");
    CHECK(out["error"]["message"].get<std::string>().find("deeper than 64") != std::string::npos);
    const std::string config = "{\"model\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
    CHECK(envelope_of("params", config)["error"]["field"] == "args");
    // 64 levels is within the limit: the method itself rejects the shape
    const json at_limit = envelope_of(
        "tensor_bytes", "{\"dtype\":\"bf16\",\"shape\":" + std::string(63, '[') + std::string(63, ']') + "}");
    CHECK(at_limit["error"]["field"] == "shape");
    // a config.json given as text is held to the same limit
    const json hf_text =
        envelope_of("params", json{{"hf_config", std::string(100, '[') + std::string(100, ']')}}.dump());
    CHECK(hf_text["error"]["field"] == "hf_config");
}

TEST_CASE("call rejects argument text above 1 MiB without parsing it") {
    const std::string huge = "{\"model\":\"" + std::string(2 << 20, 'a') + "\"}";
    const json out = envelope_of("params", huge);
    CHECK(out["error"]["field"] == "args");
    CHECK(out["error"]["message"].get<std::string>().find("1 MiB") != std::string::npos);
}

TEST_CASE("error messages escape control characters and cap echoed input") {
    const json escape = envelope_of("params", R"({"model":"\u001b[2J\u0007gone"})");
    const std::string message = escape["error"]["message"].get<std::string>();
    CHECK(escape["error"]["field"] == "model");
    CHECK(message.find("\\x1b[2J\\x07gone") != std::string::npos);
    CHECK_FALSE(has_control(message));
    const json long_name = envelope_of("params", json{{"model", std::string(100000, 'x')}}.dump());
    CHECK(long_name["error"]["message"].get<std::string>().size() < 1200);
}

TEST_CASE("numeric strings accept only decimal and scientific notation: no hex, inf or nan") {
    for (const char* text : {"0x10", "inf", "-inf", "nan", "infinity", "1e999", "1e-400", " 8", "8 ", "1,000", ""}) {
        INFO(text);
        const json out = envelope_of(
            "training_cost",
            json{{"params", text}, {"tokens", 1e12}, {"gpus", 8}, {"peak_tflops", 989}, {"mfu", 0.4}}.dump());
        CHECK(out["error"]["field"] == "params");
    }
    for (const char* text : {"7e9", "7E+9", "7000000000.", ".7e10", "+7e9"}) {
        INFO(text);
        CHECK(envelope_of("training_cost",
                          json{{"params", text}, {"tokens", 1e12}, {"gpus", 8}, {"peak_tflops", 989}, {"mfu", 0.4}}
                              .dump())["ok"] == true);
    }
}

TEST_CASE("a result that is not a finite number is an error naming the input that caused it") {
    // flops --tokens 1e308 used to print inf and -nan
    const json flops = envelope_of("flops", R"({"model":"gpt2-small","tokens":1e308})");
    CHECK(flops["ok"] == false);
    CHECK(flops["error"]["field"] == "tokens");
    // roofline_custom with extreme inputs used to return null for the ridge point
    const json ridge = envelope_of("roofline_custom", R"({"peak_flops_per_s":1e308,"bandwidth_bytes_per_s":1e-300})");
    CHECK(ridge["ok"] == false);
    CHECK(ridge["error"]["field"] == "peak_flops_per_s");
    CHECK(ridge["error"]["message"].get<std::string>().find("ridge_flops_per_byte") != std::string::npos);
    // the net stands under every method: no ok result anywhere holds a null where a number was
    const json fine = envelope_of("roofline_custom", R"({"peak_flops_per_s":1e15,"bandwidth_bytes_per_s":3e12})");
    CHECK(fine["ok"] == true);
}

TEST_CASE("add_warning appends field and message to the result's warnings") {
    json result = json::object();
    tally::api::add_warning(result, "mfu", "first");
    tally::api::add_warning(result, "tokens", "second");
    REQUIRE(result["warnings"].size() == 2);
    CHECK(result["warnings"][1] == json{{"field", "tokens"}, {"message", "second"}});
}

using tally_test::error;

TEST_CASE("training_cost's token rate is tokens over seconds, and stays finite for a token count too small to time") {
    const json args = {{"params", 70e9}, {"tokens", 15e12}, {"gpus", 1024}, {"peak_tflops", 989.5}, {"mfu", 0.5}};
    const json run = tally_test::ok("training_cost", args);
    CHECK(run["tokens_per_second"].get<double>() * run["seconds"].get<double>() == Approx(15e12).epsilon(1e-12));
    CHECK(run["tokens_per_second_per_gpu"].get<double>() * 1024 == Approx(run["tokens_per_second"].get<double>()));
    json tiny = args;
    tiny["tokens"] = 5e-324;  // the seconds underflow to 0; the rate does not depend on the token count
    CHECK(tally_test::ok("training_cost", tiny)["tokens_per_second"] == run["tokens_per_second"]);
}

TEST_CASE("a length past a model's learned positions is warned about by every method that takes one") {
    // GPT-2 small has 1,024 learned position embeddings (Radford et al. 2019): position 131,071 has none.
    const auto seq_warnings = [](const json& result, const char* field) {
        std::vector<std::string> found;
        for (const json& w : result.value("warnings", json::array()))
            if (w["field"] == field) found.push_back(w["message"].get<std::string>());
        return found;
    };
    for (const char* method : {"memory_budget", "flops"}) {
        INFO(method);
        const auto past = seq_warnings(tally_test::ok(method, {{"model", "gpt2-small"}, {"seq", 131072}}), "seq");
        REQUIRE(past.size() == 1);
        CHECK(past[0].find("1024 learned positions") != std::string::npos);
        CHECK(seq_warnings(tally_test::ok(method, {{"model", "gpt2-small"}, {"seq", 1024}}), "seq").empty());
    }
    CHECK(seq_warnings(tally_test::ok("kv_cache", {{"model", "gpt2-small"}, {"context", 4096}}), "context").size() ==
          1);
    // Rotary positions have no table to run past: Llama 2 at 32k is a long-context question, not a missing embedding.
    CHECK(seq_warnings(tally_test::ok("memory_budget", {{"model", "llama-2-7b"}, {"seq", 32768}}), "seq").empty());
}

TEST_CASE("non-finite and fractional numbers given as strings are rejected with the field") {
    CHECK(error("memory_budget", {{"model", "llama-2-7b"}, {"seq", "nan"}})["field"] == "seq");
    CHECK(error("memory_budget", {{"model", "llama-2-7b"}, {"gpus", "inf"}})["field"] == "gpus");
    CHECK(error("flops", {{"model", "llama-2-7b"}, {"tokens", -5}})["field"] == "tokens");
    CHECK(error("kv_cache", {{"model", "llama-2-7b"}, {"context", 0}})["field"] == "context");
    CHECK(error("training_cost", {{"params", 7e9},
                                  {"tokens", 1e12},
                                  {"hardware", "a100-80gb"},
                                  {"dtype", "fp8"},
                                  {"gpus", 8},
                                  {"mfu", 0.4}})["field"] == "dtype");
}

namespace {

// A message that prints a non-finite number tells the reader nothing they can act on; quoted input ("nan" as the
// caller typed it) is an echo, not a computed value.
bool has_non_finite_text(const std::string& message) {
    static const std::regex quoted(R"("[^"]*")");
    static const std::regex word(R"((^|[^A-Za-z_])(-?nan|-?inf|infinity)($|[^A-Za-z_]))", std::regex::icase);
    return std::regex_search(std::regex_replace(message, quoted, "\"\""), word);
}

bool has_impossible_range(const std::string& message) {
    if (message.find("below 0 ") != std::string::npos || message.find("below -") != std::string::npos) return true;
    static const std::regex range(R"(\[(-?[0-9.e+]+), (-?[0-9.e+]+)\])");
    for (auto it = std::sregex_iterator(message.begin(), message.end(), range); it != std::sregex_iterator(); ++it)
        if (std::stod((*it)[1]) > std::stod((*it)[2])) return true;
    return false;
}

// The error's field is an argument the caller gave ("values" also covers "values[3]"), or a whole-input name.
bool names_given_field(const std::string& field, const json& args) {
    if (field == "args" || field == "method") return true;
    for (const auto& [key, value] : args.items()) {
        if (field == key || field.rfind(key + "[", 0) == 0 || field.rfind(key + ".", 0) == 0) return true;
        if (value.is_object()) return true;  // a config object's errors name its keys, present or missing
    }
    return false;
}

}  // namespace

TEST_CASE("property: every error names an argument the caller gave, stays under 1,000 bytes and prints no nan or inf") {
    // One valid call per method (docs/API.md); each argument in turn gets each hostile value.
    const json kModel = {{"model", "llama-2-7b"}};
    const std::vector<std::pair<const char*, json>> calls = {
        {"training_cost",
         {{"params", 70e9},
          {"tokens", 15e12},
          {"gpus", 1024},
          {"peak_tflops", 989.5},
          {"mfu", 0.5},
          {"dollars_per_gpu_hour", 2}}},
        {"training_cost",
         {{"model", "llama-2-7b"},
          {"tokens", 1e12},
          {"gpus", 8},
          {"hardware", "h100-sxm"},
          {"mfu", 0.4},
          {"seq", 4096},
          {"recompute", "full"}}},
        {"mfu", {{"params", 7e9}, {"tokens_per_second", 3e3}, {"gpus", 1}, {"peak_flops_per_s", 989e12}}},
        {"params", kModel},
        {"flops", {{"model", "llama-2-7b"}, {"tokens", 1e12}, {"seq", 2048}}},
        {"memory_budget",
         {{"model", "llama-2-7b"},
          {"seq", 4096},
          {"micro_batch", 1},
          {"gpus", 8},
          {"zero", 3},
          {"tp", 2},
          {"hardware", "h100-sxm"}}},
        {"finetune",
         {{"model", "llama-2-7b"},
          {"method", "qlora"},
          {"lora_rank", 16},
          {"lora_targets", "all-linear"},
          {"lora_dropout", 0.1},
          {"paged", true},
          {"hardware", "h100-sxm"}}},
        {"kv_cache", {{"model", "llama-2-7b"}, {"context", 4096}, {"batch", 8}, {"hardware", "h100-sxm"}}},
        {"collective",
         {{"collective", "all_reduce"},
          {"message_bytes", 1e9},
          {"ranks_per_node", 8},
          {"nodes", 2},
          {"hardware", "h100-sxm"}}},
        {"comm_roofline", {{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"seq", 4096}, {"degree", 8}}},
        {"overlap",
         {{"scheme", "ddp"},
          {"layers", 8},
          {"forward_seconds", 1e-3},
          {"layer_bytes", 1e8},
          {"bucket_bytes", 5e7},
          {"ranks_per_node", 8},
          {"nodes", 2}}},
        {"context_parallel", {{"model", "llama-3-405b"}, {"seq", 131072}, {"cp", 16}}},
        {"moe_routing", {{"model", "mixtral-8x7b"}, {"seq", 4096}, {"ep", 8}, {"capacity_factor", 1.25}}},
        {"fit", {{"mode", "largest_model"}, {"gpus", 8}, {"hardware", "h100-sxm"}}},
        {"float_encode", {{"format", "e4m3"}, {"value", 0.1}}},
        {"float_decode", {{"format", "bf16"}, {"code", 16256}}},
        {"block_quantize", {{"scheme", "mxfp8_e4m3"}, {"values", json::array({1, 2, 3, -6})}}},
        {"compute_units", {{"params", 70e9}, {"tokens", 15e12}, {"hardware", "h100-sxm"}, {"mfu", 0.4}, {"days", 30}}},
        {"roofline_custom", {{"peak_flops_per_s", 1e15}, {"bandwidth_bytes_per_s", 3e12}}},
        {"step_time",
         {{"model", "llama-2-7b"},
          {"hardware", "h100-sxm"},
          {"gpus", 8},
          {"tp", 2},
          {"pp", 2},
          {"micro_batch", 1},
          {"global_batch", 64}}},
        {"pipeline_schedule",
         {{"schedule", "zb-h1"}, {"stages", 4}, {"microbatches", 8}, {"forward", 1}, {"backward", 2}, {"weight", 0.9}}},
        {"pipeline_schedule", {{"schedule", "dualpipe"}, {"stages", 4}, {"microbatches", 8}}},
        {"checkpoint_interval",
         {{"gpu_mtbf_hours", 5e4},
          {"gpus", 16384},
          {"checkpoint_bytes", 5e12},
          {"write_bytes_per_s", 1e11},
          {"restart_seconds", 300},
          {"interval_seconds", 900},
          {"work_hours", 1000},
          {"dollars_per_gpu_hour", 2}}},
    };
    std::string overrides;
    for (int i = 0; i < 400; ++i) overrides += "\xe2\x80\xae";
    const std::vector<json> hostile = {1e308,
                                       -1e308,
                                       5e-324,
                                       -5e-324,
                                       0,
                                       -1,
                                       1e18,
                                       0.5,
                                       "1e308",
                                       "nan",
                                       "inf",
                                       "0x10",
                                       "",
                                       overrides,
                                       std::string("a\0b", 3),
                                       true,
                                       json::array({1e308, -1e308}),
                                       json::object()};
    int checked = 0;
    for (const auto& [method, base] : calls) {
        REQUIRE(json::parse(tally::api::call(method, base.dump()))["ok"] == true);
        for (const auto& [key, original] : base.items())
            for (const json& value : hostile) {
                json args = base;
                args[key] = value;
                const json envelope = json::parse(tally::api::call(method, args.dump()));
                if (envelope["ok"] == true) continue;
                const std::string field = envelope["error"]["field"], message = envelope["error"]["message"];
                INFO(method << " " << key << " = " << value.dump().substr(0, 60) << " -> " << field << ": " << message);
                CHECK(names_given_field(field, args));
                CHECK(message.size() <= tally::kMaxMessageBytes);
                // inf and NaN are values of the float formats, so the precision methods may name them
                const bool formats =
                    std::string(method).rfind("float_", 0) == 0 || std::string(method) == "block_quantize";
                if (!formats) CHECK_FALSE(has_non_finite_text(message));
                CHECK_FALSE(has_impossible_range(message));
                ++checked;
            }
    }
    CHECK(checked > 200);
}
