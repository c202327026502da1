#include "tally/compute/units.h"

#include <cmath>

#include "tally/base/error.h"

namespace tally {

double petaflop_s_days(double flops) {
    if (!(flops > 0) || !std::isfinite(flops)) throw InputError("flops", "flops must be a positive finite number");
    return flops / kPetaflopSDayFlops;
}

double gpu_seconds(double flops, double peak_flops_per_s, double mfu) {
    if (!(mfu > 0 && mfu <= 1)) throw InputError("mfu", "mfu must be in (0, 1]");
    if (!(flops > 0) || !std::isfinite(flops)) throw InputError("flops", "flops must be a positive finite number");
    return flops / (peak_flops_per_s * mfu);
}

std::int64_t gpus_for_days(double gpu_seconds, double days) {
    if (!(days > 0) || !std::isfinite(days)) throw InputError("days", "days must be a positive number");
    const double gpu_days = gpu_seconds / 86'400.0;
    return static_cast<std::int64_t>(std::ceil(gpu_days / days));
}

}  // namespace tally
