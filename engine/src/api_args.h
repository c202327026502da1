// Argument readers shared by the API areas (internal to engine/src).
#pragma once

#include <nlohmann/json.hpp>

#include "tally/memory.h"

namespace tally::api {

// The training setup of the memory budget from API arguments (seq, micro_batch, global_batch, gpus,
// zero, tp, pp, sequence_parallel, recompute, flash_attention, dropout, activation_bytes, recipe and
// per-class precision); defined in api_accounting.cpp. `recipe_out` (optional) receives the recipe.
TrainingSetup setup_from_args(const nlohmann::json& args, nlohmann::json* recipe_out);

}  // namespace tally::api
