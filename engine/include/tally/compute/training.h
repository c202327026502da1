// Training compute and wall-clock time: the 6ND rule and FLOPs -> seconds and GPU-seconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tally/compute/flops.h"

namespace tally {

// A parameter count given as a number: in [1, max double / 8] (at least one parameter, and 8N, the FLOPs per
// token with full recomputation, stays finite); InputError on "params" otherwise. Returns params.
double require_params(double params);

// 6ND = six_n(N) · D. params as require_params; tokens finite and > 0.
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

// Which FLOPs per token a training-time estimate counts: the exact count of the model's matmuls and
// attention (flops.h, needs a model shape) or 6N (Kaplan et al. 2020, from a parameter count alone).
enum class FlopsBasis { Exact, SixND };
const char* to_string(FlopsBasis basis);  // "exact", "six_nd"
// InputError "flops_basis"; a run given by params alone has no shape, so only six_nd.
FlopsBasis flops_basis_from_string(const std::string& text, bool has_model);

// The FLOPs per token a training run pays on one basis, and the N of its Chinchilla reference.
struct TrainingFlopsPerToken {
    FlopsBasis basis = FlopsBasis::Exact;
    double executed = 0;                     // FLOPs the hardware executes per token (recomputation included)
    double model = 0;                        // MFU numerator per token (no recomputation)
    double six_n = 0;                        // 6N, active parameters for a mixture of experts
    double chinchilla_params = 0;            // N of the Chinchilla reference: active for MoE, else total
    const char* chinchilla_basis = "total";  // "total", "active" or "given" (params alone)
};
// From a model's FLOP count (count_flops, counted once by the caller, which may also show it): the exact
// count or its 6N.
TrainingFlopsPerToken training_flops_per_token(const ModelConfig& config, const FlopsResult& counted, FlopsBasis basis);
// A run given by its parameter count alone, with the FLOP-count options its arguments name. Options that only
// a model shape gives meaning to are InputErrors naming the field: a recompute_ops list, recompute_layers,
// FlashAttention's recomputed Q·Kᵀ, an attention_flops convention (6ND counts no attention scores).
struct ParamsOnlyRun {
    double params = 0;
    Recompute recompute = Recompute::None;
    bool recompute_ops = false;  // a recompute_ops list was given
    std::int64_t recompute_layers = 0;
    bool flash_attention = false;
    bool attention_flops = false;  // an attention_flops convention was given
};
// From a parameter count alone: 6N, or 8N executed with full recomputation (flops_from_params).
TrainingFlopsPerToken training_flops_per_token(const ParamsOnlyRun& run);

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
    double gpu_seconds = 0;  // seconds × gpus: what a cluster bills (display in GPU-hours is the caller's)
};

// seconds = total_flops / (gpus * peak * mfu). Throws InputError naming the field on bad input.
TrainingTime estimate_training_time(const TrainingTimeInput& input);
// total_flops = FLOPs per token × tokens; InputError "tokens" when the product overflows a double.
double run_flops(double flops_per_token, double tokens);
// Dollars = GPU-hours (seconds / 3600 × gpus) × price per GPU-hour; InputError "dollars_per_gpu_hour" on overflow.
double training_cost_dollars(const TrainingTime& time, std::int64_t gpus, double dollars_per_gpu_hour);

// A legal input that is likely a mistake; results list these as warnings beside the numbers.
struct InputWarning {
    std::string field, message;
};
// Above these an input is legal but likely a mistake.
// The best published large-scale MFU is PaLM 540B's 46.2 % (Chowdhery et al. 2022, Table 3);
// 75 % leaves room for smaller, well-tuned runs.
inline constexpr double kImplausibleMfu = 0.75;
// AWS p5.48xlarge (8x H100) lists at $98.32 per hour on demand (2023): $12.29 per GPU-hour; 100 is 8x that.
inline constexpr double kImplausibleDollarsPerGpuHour = 100;
// Warnings of a training-time estimate: an MFU above kImplausibleMfu, a price above kImplausibleDollarsPerGpuHour.
std::vector<InputWarning> training_cost_warnings(double mfu, std::optional<double> dollars_per_gpu_hour);
// Warnings of a measured utilization: MFU or HFU above 100 % of peak means an input is wrong.
std::vector<InputWarning> utilization_warnings(const Utilization& utilization);

}  // namespace tally
