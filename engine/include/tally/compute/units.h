// A training run's compute in the units papers and budgets use: petaFLOP/s-days (the GPT-3 paper's unit),
// GPU-seconds at a given MFU, and the GPUs needed to finish within a deadline in days.
#pragma once

#include <cstdint>

namespace tally {

// One petaFLOP/s sustained for one day: 10^15 FLOP/s × 86,400 s (Brown et al. 2020, table D.1).
inline constexpr double kPetaflopSDayFlops = 1e15 * 86'400.0;

double petaflop_s_days(double flops);  // InputError "flops" unless positive and finite
// Seconds one GPU at `peak_flops_per_s` × `mfu` takes for `flops`; InputError "mfu" outside (0, 1].
double gpu_seconds(double flops, double peak_flops_per_s, double mfu);
// The fewest whole GPUs that finish `gpu_seconds` of work within `days`; InputError "days" unless positive.
std::int64_t gpus_for_days(double gpu_seconds, double days);

}  // namespace tally
