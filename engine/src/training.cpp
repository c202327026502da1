#include "tally/training.h"

#include <cmath>

#include "tally/error.h"

namespace tally {

double training_flops(double params, double tokens) {
    require_positive("params", params);
    require_positive("tokens", tokens);
    const double flops = 6.0 * params * tokens;
    if (!std::isfinite(flops)) throw InputError("params", "params * tokens is too large to represent");
    return flops;
}

TrainingTime estimate_training_time(const TrainingTimeInput& input) {
    require_positive("total_flops", input.total_flops);
    if (input.gpus < 1) throw InputError("gpus", "gpus must be a whole number >= 1, got " + std::to_string(input.gpus));
    require_positive("peak_flops_per_s", input.peak_flops_per_s);
    require_in_left_open("mfu", input.mfu, 0.0, 1.0);

    TrainingTime out;
    out.total_flops = input.total_flops;
    out.cluster_flops_per_s = static_cast<double>(input.gpus) * input.peak_flops_per_s * input.mfu;
    out.seconds = input.total_flops / out.cluster_flops_per_s;
    out.days = out.seconds / 86400.0;
    out.gpu_hours = out.seconds / 3600.0 * static_cast<double>(input.gpus);
    if (!std::isfinite(out.seconds) || !std::isfinite(out.gpu_hours))
        throw InputError("peak_flops_per_s", "the run is too long to represent in seconds: peak_flops_per_s x gpus x mfu = " +
                                                 format_number(out.cluster_flops_per_s) + " FLOP/s is too small");
    return out;
}

}  // namespace tally
