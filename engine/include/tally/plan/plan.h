// The layout planner: every (tp, pp, ZeRO, sequence parallelism, interleave, micro-batch,
// recomputation) of a model on N GPUs that fits the memory budget, ranked by predicted step time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/step/step.h"

namespace tally {

// The most GPUs the planner searches over (its divisor loops); the API's gpus bound for plan.
inline constexpr std::int64_t kMaxPlanGpus = 1'000'000;

struct PlanInput {
    StepLayout base;       // gpus, seq, global batch, flash attention, recipe, dtype; the rest is searched
    std::int64_t top = 5;  // layouts to return
};

struct PlanEntry {
    StepLayout layout;
    StepResult result;
    std::uint64_t memory_bytes = 0;
    std::uint64_t interleave_extra_bytes = 0;  // of memory_bytes, the interleaved schedule's extra activations
};

// A group of layouts that lose, by their main reason: "memory" (do not fit) or the breakdown
// component that costs them most time per token beyond the best layout.
struct PlanLoser {
    std::string reason;
    std::int64_t count = 0;
    StepLayout example;  // the fastest of the group (for "memory": the one closest to fitting)
    std::int64_t example_dp = 1;
    double mfu = 0;  // of the example (0 for "memory")
};

struct PlanResult {
    std::int64_t evaluated = 0, fit = 0, rejected_memory = 0, rejected_shape = 0;
    std::vector<PlanEntry> best;    // fastest first
    std::vector<PlanLoser> losers;  // largest group first
};

// InputError when the base setup is invalid (the first error a layout that fits in memory got from the step model,
// or, when no layout was refused for memory, the first any layout got: it names the argument at fault), else when no
// layout fits in memory (naming "gpus").
PlanResult plan_layouts(const ModelConfig& config, const Hardware& hardware, const PlanInput& input);

}  // namespace tally
