// The run's switches and the stack files (tally/step/stack.h, content/presets/stacks): a stack only sets defaults,
// each default cites its framework, and every switch is an argument the run can set over its stack's default.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/step/stack.h"

using namespace tally;
using tally_test::error_field;

namespace {

nlohmann::json layout_args(const std::string& stack) {
    // Every switch applies: TP 2 with sequence parallelism, CP 2, a pipeline of 2, ZeRO-3, selective recomputation,
    // FP8 tensorwise, gradient accumulation over 8 micro-batches.
    return {{"model", "llama-3-8b"},
            {"hardware", "h100-sxm"},
            {"gpus", 64},
            {"tp", 2},
            {"pp", 2},
            {"cp", 2},
            {"zero", 3},
            {"sequence_parallel", true},
            {"seq", 16384},
            {"global_batch", 64},
            {"recompute", "selective"},
            {"flash_attention", true},
            {"precision", "fp8-current-tensorwise"},
            {"stack", stack}};
}

double step_seconds(const nlohmann::json& args) { return api::invoke("step_time", args)["step_seconds"].get<double>(); }

}  // namespace

TEST_CASE("a stack is only defaults: every switch set to generic's values gives generic's step time") {
    const StepSwitches generic = stack_profile("generic").defaults;
    const double generic_seconds = step_seconds(layout_args("generic"));
    for (const StackProfile& p : stack_profiles()) {
        INFO(p.id);
        nlohmann::json args = layout_args(p.id);
        for (const StepSwitchInfo& s : kStepSwitches) args[s.name] = step_switch_value(generic, s.name);
        CHECK(step_seconds(args) == generic_seconds);
    }
}

TEST_CASE("each switch given to step_time overrides its stack's default and is echoed in the layout") {
    for (const StackProfile& p : stack_profiles())
        for (const StepSwitchInfo& s : kStepSwitches) {
            INFO(p.id << " " << s.name);
            // A value other than the stack's: the other boolean, the next enum value, a different number.
            const nlohmann::json own = step_switch_value(p.defaults, s.name);
            nlohmann::json other;
            const std::string kind = s.kind;
            if (kind == "boolean")
                other = !own.get<bool>();
            else if (kind == "number")
                other = own.get<double>() + 8;
            else {
                const std::string values = s.values;
                const std::string first = values.substr(0, values.find('|'));
                other = own.get<std::string>() == first
                            ? values.substr(first.size() + 1, values.find('|', first.size() + 1) - first.size() - 1)
                            : first;
            }
            nlohmann::json args = layout_args(p.id);
            CHECK(api::invoke("step_time", args)["layout"][s.name] == own);
            args[s.name] = other;
            CHECK(api::invoke("step_time", args)["layout"][s.name] == other);
        }
}

TEST_CASE("every switch is a declared argument of step_time and plan, defaulting to the stack's") {
    for (const char* method : {"step_time", "plan"}) {
        const api::Method* m = api::find_method(method);
        REQUIRE(m != nullptr);
        std::set<std::string> names;
        for (const api::Arg& a : m->args) names.insert(a.name);
        for (const StepSwitchInfo& s : kStepSwitches) {
            INFO(method << " " << s.name);
            CHECK(names.count(s.name) == 1);
        }
    }
}

TEST_CASE("a bad switch value is refused naming the switch and its allowed values") {
    nlohmann::json args = layout_args("torchtitan");
    args["attention_kernel"] = "flash-attn-9";
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "attention_kernel");
    args = layout_args("torchtitan");
    args["bucket_bytes"] = -5;
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "bucket_bytes");
    StepSwitches s;
    CHECK(error_field([&] { set_step_switch(s, "cp_exchange", "p2p"); }) == "cp_exchange");
    CHECK(error_field([&] { set_step_switch(s, "logits_bytes", 5000); }) == "logits_bytes");
    CHECK(error_field([&] { set_step_switch(s, "overlap_everything", true); }) == "overlap_everything");
}

TEST_CASE("a stack file's default without its source, or of an unknown switch, is refused naming it") {
    const nlohmann::json cited = {
        {"name", "x"},
        {"defaults", {{"separate_qkv", {{"value", true}, {"source", "model.py at abc123: wq, wk, wv"}}}}}};
    CHECK(stack_from_json("x", cited).defaults.separate_qkv);
    nlohmann::json uncited = cited;
    uncited["defaults"]["separate_qkv"].erase("source");
    CHECK(error_field([&] { stack_from_json("x", uncited); }) == "stack.x.separate_qkv");
    nlohmann::json unknown = cited;
    unknown["defaults"]["fused_everything"] = {{"value", true}, {"source", "nowhere in particular"}};
    CHECK(error_field([&] { stack_from_json("x", unknown); }) == "stack.x.fused_everything");
    nlohmann::json bad = cited;
    bad["defaults"]["separate_qkv"]["value"] = "maybe";
    CHECK(error_field([&] { stack_from_json("x", bad); }) == "stack.x.separate_qkv");
}

TEST_CASE("set_step_switch reads back what step_switch_value writes, for every switch of every stack") {
    for (const StackProfile& p : stack_profiles())
        for (const StepSwitchInfo& s : kStepSwitches) {
            INFO(p.id << " " << s.name);
            StepSwitches copy;
            set_step_switch(copy, s.name, step_switch_value(p.defaults, s.name));
            CHECK(step_switch_value(copy, s.name) == step_switch_value(p.defaults, s.name));
        }
}
