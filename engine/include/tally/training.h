// Training compute and wall-clock time: the 6ND rule and FLOPs -> seconds, days, GPU-hours.
#pragma once

#include <cstdint>

#include "tally/flops.h"

namespace tally {

// 6N: training FLOPs per token of a model with N parameters, about 2N forward and 4N backward
// (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", sec. 2.1). The one home of the rule:
// the FLOP count (flops.cpp), training time and the API all call it.
inline double six_n(double params) { return 6 * params; }

// 6ND = six_n(N) · D. params and tokens must be finite and > 0.
double training_flops(double params, double tokens);

// Training FLOPs per token from a parameter count alone (no model shape, so no attention scores):
// the model FLOPs are 6N; full recomputation adds one more forward pass, 2N, so the hardware executes
// 8N (Korthikanti et al. 2022, sec. 5). Selective recomputation needs the attention shape: InputError.
struct ParamsOnlyFlops {
    double model_per_token = 0;     // 6N: the MFU numerator
    double training_per_token = 0;  // 6N, or 8N with full recomputation
};
ParamsOnlyFlops flops_from_params(double params, Recompute recompute);

// The Chinchilla rule: compute-optimal training uses about 20 tokens per parameter (Hoffmann et al. 2022,
// "Training Compute-Optimal Large Language Models": Chinchilla, 70B parameters on 1.4T tokens; Table 3 gives
// ~20 tokens per parameter across compute budgets). They count all parameters, embeddings included; the rule
// was fitted on dense models, so for a mixture of experts callers pass the ACTIVE parameters (the N of the
// 6N each token pays). 20 · N is exact in a double for any N below 4.5e14.
inline constexpr double kChinchillaTokensPerParam = 20;
struct Chinchilla {
    double compute_optimal_tokens = 0;  // 20 · N
    double tokens_per_param = 0;        // D / N of the run
};
Chinchilla chinchilla(double params, double tokens);

// Utilization of a measured run (Chowdhery et al. 2022, PaLM, App. B): MFU = model FLOPs per token (no
// recomputation) × tokens/s / (gpus × peak); HFU counts the recomputed FLOPs too.
struct Utilization {
    double cluster_peak_flops_per_s = 0;  // gpus × peak
    double achieved_flops_per_s = 0;      // model FLOPs per token × tokens/s
    double mfu = 0;
    double hfu = 0;
    double six_n_mfu = 0;  // MFU with 6N as the model FLOPs per token
};
Utilization utilization(double model_flops_per_token, double hardware_flops_per_token, double six_n_per_token,
                        double tokens_per_s, double gpus, double peak_flops_per_s);
// The utilization of the hardware FLOPs the run executes when its model FLOPs reach `mfu`: the time
// then equals tokens / predicted tokens per second on either FLOPs basis; capped at 1.
double executed_utilization(double mfu, double hardware_flops_per_token, double model_flops_per_token);

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
