#include "tally/training.h"

#include <algorithm>
#include <cmath>

#include "tally/error.h"

namespace tally {

double training_flops(double params, double tokens) {
    require_positive("params", params);
    require_positive("tokens", tokens);
    const double flops = six_n(params) * tokens;
    if (!std::isfinite(flops)) throw InputError("params", "params * tokens is too large to represent");
    return flops;
}

ParamsOnlyFlops flops_from_params(double params, Recompute recompute) {
    require_positive("params", params);
    if (recompute == Recompute::Selective)
        throw InputError("recompute", "recompute selective needs a model (its attention shape), not just params");
    ParamsOnlyFlops out;
    out.model_per_token = six_n(params);
    out.training_per_token = recompute == Recompute::Full ? 8 * params : out.model_per_token;
    return out;
}

Chinchilla chinchilla(double params, double tokens) {
    return {kChinchillaTokensPerParam * params, tokens / params};
}

Utilization utilization(double model_flops_per_token, double hardware_flops_per_token, double six_n_per_token,
                        double tokens_per_s, double gpus, double peak_flops_per_s) {
    Utilization u;
    u.cluster_peak_flops_per_s = gpus * peak_flops_per_s;
    u.achieved_flops_per_s = model_flops_per_token * tokens_per_s;
    u.mfu = u.achieved_flops_per_s / u.cluster_peak_flops_per_s;
    u.hfu = hardware_flops_per_token * tokens_per_s / u.cluster_peak_flops_per_s;
    u.six_n_mfu = six_n_per_token * tokens_per_s / u.cluster_peak_flops_per_s;
    return u;
}

double executed_utilization(double mfu, double hardware_flops_per_token, double model_flops_per_token) {
    return std::min(1.0, mfu * hardware_flops_per_token / model_flops_per_token);
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
