// Solvers over the memory budget: the largest model N GPUs can train, and the fewest GPUs that
// train a given model and setup.
#pragma once

#include <cstdint>

#include "tally/memory/memory.h"

namespace tally {

// Fewest GPUs (tp·pp·dp with dp = 1, 2, 3, ...) whose busiest GPU fits `capacity`; 0 if none up to
// max_gpus does. global_batch, if set, must stay divisible: dp values that do not divide are skipped.
std::int64_t min_gpus(const ModelConfig& config, TrainingSetup setup, std::uint64_t capacity, std::int64_t max_gpus);

// Largest parameter count whose weights + gradients + master + optimizer states, fully sharded,
// fit `capacity_total` bytes: floor(capacity_total / bytes_per_param) (activations excluded).
std::uint64_t largest_model_params(std::uint64_t capacity_total, const Recipe& recipe);

// The same bound for any ZeRO stage and tensor/pipeline split (Rajbhandari et al. 2020, sec. 5.1:
// per GPU (2 + 2 + K)Ψ at stage 0, 4Ψ + KΨ/N_d at stage 1, 2Ψ + (2 + K)Ψ/N_d at stage 2, (4 + K)Ψ/N_d
// at stage 3, where Ψ is this GPU's share of the model after tp·pp). `capacity_total` is the usable
// memory of all `gpus`; dp = gpus / (tp·pp) must be whole. Stage 3, tp = pp = 1 equals largest_model_params.
std::uint64_t largest_model_params_sharded(std::uint64_t capacity_total, std::int64_t gpus, int zero, std::int64_t tp,
                                           std::int64_t pp, const Recipe& recipe);

// `bytes` less a reserve of `reserve_fraction` in [0, 1), the reserve rounded up so that an answer built on
// it never overstates what fits (the one rounding fit's largest_model mode applies, to all GPUs and to one).
std::uint64_t after_reserve(std::uint64_t bytes, double reserve_fraction);

// Largest depth (num_layers) of `config`'s width (hidden size, heads, vocabulary kept) whose whole
// memory budget, activations included, fits `capacity` per GPU under `setup`; 0 if not even pp
// layers fit. Memory grows with depth, so the answer is found by bisection.
std::int64_t largest_model_layers(const ModelConfig& config, const TrainingSetup& setup, std::uint64_t capacity);

}  // namespace tally
