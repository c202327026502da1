// Training compute and wall-clock time: the 6ND rule and FLOPs -> seconds, days, GPU-hours.
#pragma once

#include <cstdint>

namespace tally {

// 6ND: about 2N FLOPs per token forward and 4N backward (Kaplan et al. 2020, "Scaling Laws for
// Neural Language Models", sec. 2.1). params and tokens must be finite and > 0.
double training_flops(double params, double tokens);

struct TrainingTimeInput {
    double total_flops = 0;       // FLOPs the run must execute
    std::int64_t gpus = 1;        // number of accelerators, >= 1
    double peak_flops_per_s = 0;  // dense peak of one accelerator for the training dtype (not the sparse figure)
    double mfu = 0.5;             // model FLOPs utilization in (0, 1]
};

struct TrainingTime {
    double total_flops = 0;
    double cluster_flops_per_s = 0;  // gpus * peak * mfu: FLOP/s the run actually achieves
    double seconds = 0;
    double days = 0;
    double gpu_hours = 0;
};

// seconds = total_flops / (gpus * peak * mfu). Throws InputError naming the field on bad input.
TrainingTime estimate_training_time(const TrainingTimeInput& input);

}  // namespace tally
