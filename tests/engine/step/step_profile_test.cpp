// The stack profiles (step.h, StackProfile): each stack is a set of named choices, each choice read by step_time.
// These tests flip one field of a profile on a layout where its mechanism applies and check that the step time moves
// the way the mechanism says, so a field no mechanism reads (or a mechanism keyed on the stack's name instead of its
// field) fails here.
#include <catch2/catch.hpp>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/hardware/hardware.h"
#include "tally/step/step.h"

using namespace tally;

namespace {

// Llama 3 8B (32 query, 8 K/V heads: GQA; SwiGLU) at 8,192 tokens with FlashAttention on 64 H100 SXM.
StepLayout llama_layout() {
    StepLayout l;
    l.setup.seq = 8192;
    l.setup.gpus = 64;
    l.setup.flash_attention = true;
    return l;
}

struct Flip {
    const char* field;
    std::function<void(StepLayout&)> layout;  // what makes the mechanism apply
    std::function<void(StepSwitches&)> flip;  // the switch changed from the generic stack's value
    int direction;                            // +1: the flipped profile is slower, -1: faster
    const char* model = "llama-3-8b";
    const char* hardware = "h100-sxm";
};

}  // namespace

TEST_CASE("stack profiles: ids unique, generic first, every stack reachable by its id") {
    std::set<std::string> ids;
    for (const StackProfile& p : stack_profiles()) {
        CHECK(ids.insert(p.id).second);  // stack_profile returns the first match: a repeated id would be unreachable
        CHECK(std::string(p.name).size() > 0);
        CHECK(&stack_profile(p.id) == &p);
    }
    CHECK(std::string(stack_profiles().front().id) == "generic");
    CHECK(&stack_profile("") == &stack_profiles().front());
    CHECK(tally_test::error_field([] { stack_profile("megatron"); }) == "stack");
    // The API's declared choices (api_args.h, docs/API.md, the widget's list) are the profiles, in order.
    std::string ids_joined;
    for (const StackProfile& p : stack_profiles()) ids_joined += (ids_joined.empty() ? "" : "|") + std::string(p.id);
    const api::Method* step = api::find_method("step_time");
    REQUIRE(step != nullptr);
    bool declared = false;
    for (const api::Arg& arg : step->args)
        if (std::string(arg.name) == "stack") {
            declared = true;
            REQUIRE(arg.values != nullptr);
            CHECK(std::string(arg.values) == ids_joined);
        }
    CHECK(declared);
}

TEST_CASE("stack profiles: each field a mechanism reads changes the step time when flipped, the way it says") {
    const auto tp8 = [](StepLayout& l) { l.setup.tp = 8, l.setup.sequence_parallel = true; };
    const auto cp4 = [](StepLayout& l) { l.setup.seq = 32768, l.setup.cp = 4, l.setup.tp = 2; };
    const auto pp4 = [](StepLayout& l) { l.setup.pp = 4, l.setup.global_batch = 64; };
    const std::vector<Flip> flips = {
        {"attention_kernel", {}, [](StepSwitches& p) { p.attention = AttentionKernel::FusedHopper; }, -1},
        {"tp_comm_overlap", tp8, [](StepSwitches& p) { p.tp_comm_overlap = true; }, -1},
        {"fp8_tensorwise_sp_gather",
         [&](StepLayout& l) { tp8(l), l.dtype = "fp8", l.precision = "fp8-current-tensorwise"; },
         [](StepSwitches& p) { p.fp8_tensorwise_sp_gather = true; }, -1},
        {"sp_batch_first", tp8, [](StepSwitches& p) { p.sp_batch_first = true; }, +1},
        {"cp_exchange", cp4, [](StepSwitches& p) { p.cp_exchange = CpExchange::Ring; }, -1},
        {"cp_repeat_kv", cp4, [](StepSwitches& p) { p.cp_repeat_kv = true; }, +1},
        {"per_op_sac", [](StepLayout& l) { l.setup.recompute = Recompute::Selective; },
         [](StepSwitches& p) { p.per_op_sac = true; }, +1},
        {"eager_elementwise", {}, [](StepSwitches& p) { p.eager_elementwise = true; }, +1},
        {"fsdp_keep_gathered_with_pp", [&](StepLayout& l) { pp4(l), l.setup.zero = 3; },
         [](StepSwitches& p) { p.fsdp_keep_gathered_with_pp = true; }, -1},
        {"grad_fp32", [](StepLayout& l) { l.setup.global_batch = 512; },
         [](StepSwitches& p) { p.grad_sync.fp32 = true; }, +1},
        {"grad_reduce_after_backward", [](StepLayout& l) { l.setup.zero = 1; },
         [](StepSwitches& p) { p.grad_sync.zero_after_backward = true; }, +1},
        {"tied_grad_after_backward", pp4, [](StepSwitches& p) { p.grad_sync.tied_after_backward = true; }, +1,
         "gemma-2-9b"},
        // torch._grouped_mm's measured BF16 rate on B200 (step_moe.cpp) is below the dense GEMM model's at Mixtral's.
        {"torch_grouped_mm", [](StepLayout& l) { l.setup.ep = 8; }, [](StepSwitches& p) { p.torch_grouped_mm = true; },
         +1, "mixtral-8x7b", "b200"},
        // 16 local experts of gpt-oss-120b at 1,024 tokens: the host's per-expert launches outlast the GPU's work.
        {"expert_host_launches", [](StepLayout& l) { l.setup.ep = 8, l.setup.seq = 1024; },
         [](StepSwitches& p) { p.expert_host_launches = true; }, +1, "gpt-oss-120b"},
        {"separate_qkv", tp8, [](StepSwitches& p) { p.separate_qkv = true; }, +1},
        {"pipeline_lockstep", [&](StepLayout& l) { pp4(l), l.interleave = 2; },
         [](StepSwitches& p) { p.pipeline_lockstep = true; }, +1},
        {"cost_balanced_stages", pp4, [](StepSwitches& p) { p.cost_balanced_stages = true; }, -1},
        {"logits_bytes", {}, [](StepSwitches& p) { p.logits_bytes = 52; }, +1},
        {"eager_glu", {}, [](StepSwitches& p) { p.eager_glu = true; }, +1},
        // Without overlap every bucket's collective is exposed: more buckets wait more NCCL latencies, fewer fewer.
        {"bucket_bytes", [](StepLayout& l) { l.overlap_grad_reduce = false; },
         [](StepSwitches& p) { p.grad_sync.bucket_bytes = 1 << 20; }, +1},
        {"bucket_params", [](StepLayout& l) { l.overlap_grad_reduce = false; },
         [](StepSwitches& p) { p.grad_sync.bucket_params = 5e8; }, -1},
        {"bucket_params_per_rank", [](StepLayout& l) { l.overlap_grad_reduce = false; },
         [](StepSwitches& p) { p.grad_sync.bucket_params = 1, p.grad_sync.bucket_params_per_rank = 1e7; }, -1},
    };
    // Every switch has its flip: none exists that no mechanism reads.
    std::set<std::string> flipped_names;
    for (const Flip& f : flips) flipped_names.insert(f.field);
    for (const StepSwitchInfo& s : kStepSwitches) CHECK(flipped_names.count(s.name) == 1);
    CHECK(flipped_names.size() == std::size(kStepSwitches));
    for (const Flip& f : flips) {
        INFO(f.field);
        const ModelConfig c = tally_test::preset(f.model);
        const Hardware hw = find_hardware(f.hardware);
        StepLayout l = llama_layout();
        if (f.layout) f.layout(l);
        const StepSwitches base = stack_profile("generic").defaults;
        StepSwitches flipped = base;
        f.flip(flipped);
        l.switches = base;
        const double before = step_time(c, hw, l).step_seconds;
        l.switches = flipped;
        const double after = step_time(c, hw, l).step_seconds;
        INFO(before << " s -> " << after << " s");
        if (f.direction > 0)
            CHECK(after > before * (1 + 1e-9));
        else
            CHECK(after < before * (1 - 1e-9));
    }
}

TEST_CASE("step_time reads the stack's profile, not its name") {
    // Each stack's profile handed to step_time under the generic name gives the step time of the stack's own name:
    // no mechanism keys on layout.stack. Layouts where every mechanism of the profiles applies: TP 2 with sequence
    // parallelism, CP 2, a pipeline of 2 with ZeRO-3 and selective recomputation, FP8 tensorwise.
    const ModelConfig c = tally_test::preset("llama-3-8b");
    const Hardware hw = find_hardware("h100-sxm");
    StepLayout l = llama_layout();
    l.setup.tp = 2, l.setup.sequence_parallel = true, l.setup.cp = 2, l.setup.seq = 16384, l.setup.pp = 2;
    l.setup.zero = 3, l.setup.recompute = Recompute::Selective, l.setup.global_batch = 64;
    l.dtype = "fp8", l.precision = "fp8-current-tensorwise";
    for (const StackProfile& p : stack_profiles()) {
        INFO(p.id);
        l.stack = p.id;
        l.switches.reset();
        const double by_name = step_time(c, hw, l).step_seconds;
        l.stack = "generic";
        l.switches = p.defaults;
        CHECK(step_time(c, hw, l).step_seconds == by_name);
    }
}
