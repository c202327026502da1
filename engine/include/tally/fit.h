// Solvers over the memory budget: the largest model N GPUs can train, and the fewest GPUs that
// train a given model and setup.
#pragma once

#include <cstdint>

#include "tally/memory.h"

namespace tally {

// Fewest GPUs (tp·pp·dp with dp = 1, 2, 3, ...) whose busiest GPU fits `capacity`; 0 if none up to
// max_gpus does. global_batch, if set, must stay divisible: dp values that do not divide are skipped.
std::int64_t min_gpus(const ModelConfig& config, TrainingSetup setup, std::uint64_t capacity,
                      std::int64_t max_gpus);

// Largest parameter count whose weights + gradients + master + optimizer states, fully sharded,
// fit `capacity_total` bytes: floor(capacity_total / bytes_per_param) (activations excluded).
std::uint64_t largest_model_params(std::uint64_t capacity_total, const Precision& precision);

}  // namespace tally
