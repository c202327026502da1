#include "tally/compute/training.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tally/base/error.h"
#include "tally/model/params.h"

namespace tally {

double require_params(double params) {
    // 1e18 parameters (2 EB of bf16 weights) is far past any model, a round bound a reader can check, and keeps
    // 6·params·tokens finite for any tokens up to 1e289.
    constexpr double most = 1e18;
    if (!std::isfinite(params) || !(params >= 1) || !(params <= most))
        throw InputError("params", "params must be a parameter count in [1, " + format_number(most) + "], got " +
                                       format_number(params));
    return params;
}

double training_flops(double params, double tokens) {
    require_params(params);
    require_positive("tokens", tokens);
    const double flops = six_n(params) * tokens;
    if (!std::isfinite(flops)) throw InputError("params", "params * tokens is too large to represent");
    return flops;
}

ParamsOnlyFlops flops_from_params(double params, Recompute recompute) {
    require_params(params);
    if (recompute == Recompute::Selective)
        throw InputError("recompute", "recompute selective needs a model (its attention shape), not just params");
    ParamsOnlyFlops out;
    out.model_per_token = six_n(params);
    out.training_per_token = recompute == Recompute::Full ? 8 * params : out.model_per_token;
    return out;
}

Chinchilla chinchilla(double params, double tokens) { return {kChinchillaTokensPerParam * params, tokens / params}; }

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
    out.gpu_seconds = out.seconds * static_cast<double>(input.gpus);
    if (!std::isfinite(out.seconds) || !std::isfinite(out.gpu_seconds))
        throw InputError("peak_flops_per_s",
                         "the run is too long to represent in seconds: peak_flops_per_s x gpus x mfu = " +
                             format_number(out.cluster_flops_per_s) + " FLOP/s is too small");
    return out;
}

const char* to_string(FlopsBasis basis) { return basis == FlopsBasis::Exact ? "exact" : "six_nd"; }

FlopsBasis flops_basis_from_string(const std::string& text, bool has_model) {
    if (text == "six_nd") return FlopsBasis::SixND;
    if (text == "exact") {
        if (!has_model)
            throw InputError("flops_basis", "flops_basis exact needs a model (preset or config), not just params");
        return FlopsBasis::Exact;
    }
    throw InputError("flops_basis", "flops_basis must be exact or six_nd, got \"" + text + "\"");
}

TrainingFlopsPerToken training_flops_per_token(const ModelConfig& c, const FlopsResult& r, FlopsBasis basis) {
    const ParamCount p = count_params(c);
    TrainingFlopsPerToken t;
    t.basis = basis;
    t.six_n = c.is_moe() ? r.six_n_active : r.six_n;
    t.chinchilla_params = static_cast<double>(c.is_moe() ? p.active : p.total);
    t.chinchilla_basis = c.is_moe() ? "active" : "total";
    if (basis == FlopsBasis::Exact) {
        t.executed = r.training_per_token;
        t.model = r.model_per_token;
    } else {
        t.executed = t.model = t.six_n;
    }
    return t;
}

TrainingFlopsPerToken training_flops_per_token(const ParamsOnlyRun& run) {
    const double params = run.params;
    const ParamsOnlyFlops per = flops_from_params(params, run.recompute);
    if (run.recompute_ops || run.recompute_layers != 0)
        throw InputError(run.recompute_ops ? "recompute_ops" : "recompute_layers",
                         std::string(run.recompute_ops ? "recompute_ops" : "recompute_layers") +
                             " needs a model (its layers), not just params");
    if (run.flash_attention)
        throw InputError("flash_attention", "flash_attention's recomputed Q·Kᵀ needs a model, not just params");
    if (run.attention_flops)
        throw InputError("attention_flops", "attention_flops needs a model: 6ND counts no attention scores");
    TrainingFlopsPerToken t;
    t.basis = FlopsBasis::SixND;
    t.model = t.six_n = per.model_per_token;
    t.executed = per.training_per_token;
    t.chinchilla_params = params;
    t.chinchilla_basis = "given";
    return t;
}

double run_flops(double flops_per_token, double tokens) {
    const double total = flops_per_token * tokens;
    if (!std::isfinite(total))
        throw InputError("tokens", "tokens must be below " +
                                       format_number(std::numeric_limits<double>::max() / flops_per_token) +
                                       " (the training FLOPs, " + format_number(flops_per_token) +
                                       " per token, overflow a double), got " + format_number(tokens));
    return total;
}

double training_cost_dollars(const TrainingTime& time, std::int64_t gpus, double dollars_per_gpu_hour) {
    require_positive("dollars_per_gpu_hour", dollars_per_gpu_hour);
    // Priced per GPU-hour, so the hours are taken here (seconds / 3600 first, as the price quotes them).
    const double gpu_hours = time.seconds / 3600.0 * static_cast<double>(gpus);
    const double dollars = gpu_hours * dollars_per_gpu_hour;
    if (!std::isfinite(dollars))
        throw InputError("dollars_per_gpu_hour", "dollars_per_gpu_hour = " + format_number(dollars_per_gpu_hour) +
                                                     " times " + format_number(gpu_hours) +
                                                     " GPU-hours overflows a double");
    return dollars;
}

std::vector<InputWarning> training_cost_warnings(double mfu, std::optional<double> dollars_per_gpu_hour) {
    std::vector<InputWarning> out;
    if (dollars_per_gpu_hour && *dollars_per_gpu_hour > kImplausibleDollarsPerGpuHour)
        out.push_back({"dollars_per_gpu_hour",
                       "dollars_per_gpu_hour is " + format_number(*dollars_per_gpu_hour) +
                           ": far above cloud prices (an on-demand H100 is about $12 per GPU-hour); is it the price of "
                           "a whole node, or per GPU-day?"});
    if (mfu > kImplausibleMfu)
        out.push_back({"mfu", "mfu " + format_percent(mfu) +
                                  " % is above any published large-scale training run "
                                  "(PaLM 540B: 46.2 %); the time is likely optimistic"});
    return out;
}

std::vector<InputWarning> utilization_warnings(const Utilization& u) {
    if (u.mfu > 1)
        return {
            {"tokens_per_second", "mfu is " + format_percent(u.mfu) +
                                      " %: the GPUs cannot exceed 100 % of their peak, so tokens_per_second, gpus or "
                                      "the peak is wrong"}};
    if (u.hfu > 1)
        return {{"tokens_per_second", "hfu is " + format_percent(u.hfu) +
                                          " % (recomputed FLOPs included): above 100 % of peak, so an input is wrong"}};
    return {};
}

}  // namespace tally
