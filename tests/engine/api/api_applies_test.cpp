// The "does not apply" rule (Arg::applies, tally/api.h), as a property generated from the declarations: for every
// method and every argument that declares when it applies, a call that gives it where none of its tests holds is
// refused, naming it; a call where a test holds is not refused by the rule. Through call(), the envelope every
// front end reads, so the CLI, `tally call` and the page refuse the same calls.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/api.h"

namespace {

using nlohmann::json;
using tally::api::Arg;
using tally::api::ArgType;
using tally::api::Cond;
using tally::api::Method;
using tally::api::Test;

const Arg* declared(const Method& m, std::string_view name) {
    for (const Arg& a : m.args)
        if (name == a.name) return &a;
    return nullptr;
}

std::vector<std::string> values_of(const Arg& a) {
    std::vector<std::string> out;
    std::string_view rest = a.values != nullptr ? a.values : "";
    while (!rest.empty()) {
        const auto bar = rest.find('|');
        out.emplace_back(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
    return out;
}

// A value of the declared type and static range that differs from the default (the rule looks only at whether the
// argument is given, so any value the type check takes will do).
json some_value(const Arg& a) {
    switch (a.type) {
        case ArgType::Boolean: return std::string_view(a.fallback) != "true";
        case ArgType::Integer: {
            const double low = std::isfinite(a.low) ? a.low : 0;
            const double high = std::isfinite(a.high) ? a.high : low + 2;
            return std::min(std::max(low, 2.0), high);
        }
        case ArgType::Number: return 0.1;
        case ArgType::Enum: {
            for (const std::string& v : values_of(a))
                if (v != a.fallback) return v;
            return values_of(a).front();
        }
        default: return "x";
    }
}

// Sets `args` so that `c` fails (absent where absent fails; the bound itself for Above; a declared value outside the
// list for OneOf), or holds.
void make(const Method& m, const Cond& c, bool hold, json& args) {
    const Arg* other = declared(m, c.other);
    switch (c.test) {
        case Test::Given:
            if (hold)
                args[c.other] = std::string_view(c.other) == "capacity_bytes" ? json(8e10)
                                : std::string_view(c.other) == "hardware"     ? json("h100-sxm")
                                : other != nullptr                            ? some_value(*other)
                                                                              : json("x");
            break;
        case Test::Above: args[c.other] = hold ? c.above + 1 : c.above; break;
        case Test::OneOf: {
            if (other == nullptr) return;  // not an argument of this method: never holds, fails when absent
            const std::set<std::string> in = [&] {
                std::set<std::string> s;
                Arg list{};
                list.values = c.values;
                for (const std::string& v : values_of(list)) s.insert(v);
                return s;
            }();
            if (other->values == nullptr) {  // free-form (mfu: a number or "predicted"): a listed value, or any other
                args[c.other] = hold ? json(*in.begin()) : some_value(*other);
                return;
            }
            for (const std::string& v : values_of(*other))
                if (hold == (in.count(v) > 0)) {
                    args[c.other] = v;
                    return;
                }
            FAIL("no value of " << c.other << " to " << (hold ? "pass" : "fail") << " the test");
            break;
        }
        default: break;
    }
}

json envelope(const char* method, const json& args) { return json::parse(tally::api::call(method, args.dump())); }

bool refused_by_rule(const json& env, const Arg& a) {
    if (env["ok"] == true) return false;
    const std::string message = env["error"]["message"];
    return env["error"]["field"] == a.name && (message.find(std::string(a.name) + " applies only") == 0 ||
                                               message.find("is not an argument of") != std::string::npos);
}

}  // namespace

TEST_CASE("every argument given where its declaration says it does not apply is refused, naming it") {
    std::set<std::string> tested;
    for (const json& row : tally::api::list_methods()) {
        const std::string name = row["name"];
        const Method* m = tally::api::find_method(name);
        REQUIRE(m != nullptr);
        for (const Arg& a : m->args) {
            if (a.applies.always()) continue;
            INFO(name << "." << a.name);
            // Every test fails: refused, naming the argument.
            json args = json::object();
            for (const Cond& c : a.applies.any_of) make(*m, c, false, args);
            args[a.name] = some_value(a);
            const json refused = envelope(name.c_str(), args);
            INFO(refused.dump());
            CHECK(refused_by_rule(refused, a));
            // Each test that can hold lets it through the rule (whatever else the method then says).
            for (const Cond& c : a.applies.any_of) {
                if (c.test == Test::None || c.test == Test::Never) continue;
                if (c.test != Test::Given && declared(*m, c.other) == nullptr) continue;  // cannot hold here
                json with = json::object();
                make(*m, c, true, with);
                with[a.name] = some_value(a);
                const json passed = envelope(name.c_str(), with);
                INFO(passed.dump());
                // Not refused by this declaration (a method's own rule on another input, fit's mode, may still be).
                const std::string declared_rule = std::string(a.name) + " applies only " + tally::api::applies_text(a, name);
                CHECK(passed.dump().find(declared_rule) == std::string::npos);
            }
            tested.insert(name + "." + a.name);
        }
    }
    // The examples (issue 38, item 5) are among the declared ones.
    for (const char* pair : {"kv_cache.fragmentation_fraction", "finetune.double_quant", "step_time.lora_targets",
                             "step_time.cost_balanced_stages", "plan.grad_accum_full",
                             "memory_budget.cost_balanced_stages", "plan.tp", "finetune.lora_rank"}) {
        INFO(pair);
        CHECK(tested.count(pair) == 1);
    }
}

TEST_CASE("the rule's message names the argument and the test that failed, with the value tested") {
    const json env = envelope(
        "step_time", {{"model", "llama-3-8b"}, {"hardware", "h100-sxm"}, {"gpus", 8}, {"cost_balanced_stages", true}});
    REQUIRE(env["ok"] == false);
    CHECK(env["error"]["field"] == "cost_balanced_stages");
    CHECK(env["error"]["message"] == "cost_balanced_stages applies only with `pp` > 1 (here `pp` is 1); leave it out");
    // A false switch is given too: the page sends only what applies.
    CHECK(envelope("kv_cache",
                   {{"model", "llama-3-8b"}, {"context", 4096}, {"cuda_context_bytes", 0}})["error"]["field"] ==
          "cuda_context_bytes");
    // With the test met, the same argument is used (the result differs from the run without it).
    const json base{{"model", "llama-3-8b"}, {"hardware", "h100-sxm"}, {"gpus", 8}, {"pp", 2}};
    json with = base;
    with["cost_balanced_stages"] = true;
    const json plain = envelope("step_time", base), balanced = envelope("step_time", with);
    REQUIRE(plain["ok"] == true);
    REQUIRE(balanced["ok"] == true);
    CHECK(plain["result"] != balanced["result"]);
}

TEST_CASE("the contract prints when an argument applies") {
    const json methods = tally::api::list_methods(true);
    for (const json& m : methods)
        if (m["name"] == "finetune")
            for (const json& a : m["args"]) {
                if (a["name"] == "double_quant") CHECK(a["applies"] == "with `method` qlora");
                if (a["name"] == "method") CHECK_FALSE(a.contains("applies"));
            }
}

TEST_CASE("training_cost and fit refuse through the API what the CLI alone used to refuse (issue 38 item 2)") {
    const auto with = [](json args, const char* key, const json& value) {
        args[key] = value;
        return args;
    };
    const auto field_of = [](const char* method, const json& args) {
        const json env = envelope(method, args);
        return env["ok"] == true ? std::string("accepted") : env["error"]["field"].get<std::string>();
    };
    const json cost{{"params", 7e9}, {"tokens", 1e12}, {"gpus", 8}, {"peak_tflops", 989}, {"mfu", 0.4}};
    // 6ND from a parameter count has no sequence; a peak given as a number has no dtype; a layout needs "predicted".
    CHECK(field_of("training_cost", cost) == "accepted");
    CHECK(field_of("training_cost", with(cost, "seq", 4096)) == "seq");
    CHECK(field_of("training_cost", with(cost, "dtype", "fp8")) == "dtype");
    CHECK(field_of("training_cost", with(cost, "tp", 8)) == "tp");
    CHECK(field_of("mfu", json{{"params", 7e9}, {"tokens_per_second", 1e5}, {"gpus", 8}, {"peak_tflops", 989},
                               {"capacity_factor", 1.25}}) == "capacity_factor");
    // fit: each mode refuses the other's arguments, whether the mode is given or follows from a model.
    const json largest{{"gpus", 8}, {"hardware", "h100-sxm"}};
    CHECK(field_of("fit", largest) == "accepted");
    CHECK(field_of("fit", with(largest, "max_gpus", 64)) == "max_gpus");
    CHECK(field_of("fit", with(largest, "seq", 4096)) == "seq");
    CHECK(field_of("fit", json{{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"gpus", 8}}) == "gpus");
    CHECK(field_of("fit", json{{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"reserve_fraction", 0.1}}) ==
          "reserve_fraction");
    CHECK(field_of("fit", json{{"model", "llama-2-7b"}, {"hardware", "h100-sxm"}, {"seq", 4096}}) == "accepted");
}
