// API of training time (training.h): 6ND or exact FLOPs -> seconds, days, GPU-hours and cost, and MFU
// from a measured throughput.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/error.h"
#include "tally/flops.h"
#include "tally/hardware.h"
#include "tally/input.h"
#include "tally/model.h"
#include "tally/params.h"
#include "tally/training.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- training time, cost, MFU
// Above these an input is legal but likely a mistake: the result carries a warning.
// The best published large-scale MFU is PaLM 540B's 46.2 % (Chowdhery et al. 2022, Table 3);
// 75 % leaves room for smaller, well-tuned runs.
constexpr double kImplausibleMfu = 0.75;
// AWS p5.48xlarge (8x H100) lists at $98.32 per hour on demand (2023): $12.29 per GPU-hour; 100 is 8x that.
constexpr double kImplausibleDollarsPerGpuHour = 100;

struct Peak {
    double flops_per_s = 0;
    std::string dtype;
    json hardware;
};

Peak peak_from_args(const json& args) {
    Peak p;
    p.dtype = string_or(args, "dtype", "bf16");
    // Checked even when a peak is given, so a result never echoes an unknown dtype.
    const DType type = dtype_from_string(p.dtype, "dtype", kPeakDType);
    if (auto v = optional_number_arg(args, "peak_flops_per_s")) {
        p.flops_per_s = require_positive("peak_flops_per_s", *v);
    } else if (auto t = optional_number_arg(args, "peak_tflops")) {
        p.flops_per_s = require_positive("peak_tflops", *t) * 1e12;
    } else if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        p.flops_per_s = hw.peak(type);
        p.hardware = hardware_to_json(hw);
    } else {
        throw InputError("hardware", "give hardware (a preset id) or peak_flops_per_s");
    }
    return p;
}

// Training FLOPs per token and the basis used, from a model (exact by default) or params (6ND).
struct PerToken {
    double training = 0;  // FLOPs the hardware executes per token
    double model = 0;     // MFU numerator per token (no recomputation)
    double six_n = 0;
    double params = 0;             // N of the Chinchilla reference (active for MoE, else total)
    const char* params_kind = "total";
    std::string basis;
    json model_json;
};

PerToken per_token_from_args(const json& args) {
    PerToken t;
    const bool has_model = (args.contains("model") && !args["model"].is_null()) ||
                           (args.contains("hf_config") && !args["hf_config"].is_null());
    if (has_model) {
        const ModelConfig c = resolve_model(args);
        const FlopsResult r = count_flops(c, flops_input(args, c));
        t.basis = string_or(args, "flops_basis", "exact");
        t.six_n = c.is_moe() ? r.six_n_active : r.six_n;
        t.model_json = model_to_json(c);
        const ParamCount p = count_params(c);
        t.params = static_cast<double>(c.is_moe() ? p.active : p.total);
        t.params_kind = c.is_moe() ? "active" : "total";
        if (t.basis == "exact") {
            t.training = r.training_per_token;
            t.model = r.model_per_token;
        } else if (t.basis == "six_nd") {
            t.training = t.model = t.six_n;
        } else {
            throw InputError("flops_basis", "flops_basis must be exact or six_nd, got \"" + t.basis + "\"");
        }
        return t;
    }
    const double params = number_arg(args, "params");
    require_positive("params", params);
    t.basis = string_or(args, "flops_basis", "six_nd");
    if (t.basis != "six_nd")
        throw InputError("flops_basis", "flops_basis exact needs a model (preset or config), not just params");
    const ParamsOnlyFlops per = flops_from_params(params, recompute_from_string(string_or(args, "recompute", "none")));
    t.model = t.six_n = per.model_per_token;
    t.training = per.training_per_token;
    if (!string_or(args, "recompute_ops", "").empty() || int_or(args, "recompute_layers", 0, 0, kMaxLayers) != 0)
        throw InputError("recompute_ops", "recompute_ops and recompute_layers need a model, not just params");
    if (bool_arg(args, "flash_attention", false))
        throw InputError("flash_attention", "flash_attention's recomputed Q·Kᵀ needs a model, not just params");
    if (optional_string_arg(args, "attention_flops"))
        throw InputError("attention_flops", "attention_flops needs a model: 6ND counts no attention scores");
    t.params = params;
    t.params_kind = "given";
    return t;
}

json training_cost(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens = require_positive("tokens", number_arg(args, "tokens"));
    const Peak peak = peak_from_args(args);
    TrainingTimeInput in;
    in.total_flops = per.training * tokens;
    if (!std::isfinite(in.total_flops))
        throw InputError("tokens", "tokens must be below " + format_number(std::numeric_limits<double>::max() / per.training) +
                                       " (the training FLOPs, " + format_number(per.training) +
                                       " per token, overflow a double), got " + format_number(tokens));
    in.gpus = integer_arg(args, "gpus", 1, 100'000'000);
    in.peak_flops_per_s = peak.flops_per_s;
    // mfu "predicted": the step-time model's MFU for the layout in the same arguments (tp, pp, ...),
    // scaled to the FLOPs basis in use so that the time equals tokens / predicted tokens per second.
    const auto mfu_text = args.contains("mfu") && args["mfu"].is_string() ? args["mfu"].get<std::string>() : std::string();
    json predicted;
    if (mfu_text == "predicted") {
        predicted = invoke("step_time", args);
        in.mfu = executed_utilization(predicted["mfu"].get<double>(), per.training, per.model);
    } else {
        in.mfu = number_arg(args, "mfu");
    }
    const TrainingTime t = estimate_training_time(in);
    json out{{"flops_basis", per.basis},
             {"tokens", tokens},
             {"total_flops", t.total_flops},
             {"six_nd", per.six_n * tokens},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"gpus", in.gpus},
             {"mfu", in.mfu},
             {"cluster_flops_per_s", t.cluster_flops_per_s},
             {"seconds", t.seconds},
             {"days", t.days},
             {"gpu_hours", t.gpu_hours}};
    add_chinchilla(out, per.params, tokens, per.params_kind);
    if (!per.model_json.is_null()) out["model"] = per.model_json;
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    if (!predicted.is_null()) {
        out["mfu_source"] = "predicted";
        out["predicted_mfu"] = predicted["mfu"];
        out["step_seconds"] = predicted["step_seconds"];
    }
    if (auto price = optional_number_arg(args, "dollars_per_gpu_hour")) {
        require_positive("dollars_per_gpu_hour", *price);
        out["dollars_per_gpu_hour"] = *price;
        out["cost_dollars"] = t.gpu_hours * *price;
        if (!std::isfinite(t.gpu_hours * *price))
            throw InputError("dollars_per_gpu_hour", "dollars_per_gpu_hour = " + format_number(*price) + " times " +
                                                         format_number(t.gpu_hours) + " GPU-hours overflows a double");
        if (*price > kImplausibleDollarsPerGpuHour)
            add_warning(out, "dollars_per_gpu_hour",
                        "dollars_per_gpu_hour is " + format_number(*price) +
                            ": far above cloud prices (an on-demand H100 is about $12 per GPU-hour); is it the price of "
                            "a whole node, or per GPU-day?");
    }
    if (in.mfu > kImplausibleMfu)
        add_warning(out, "mfu", "mfu " + percent(in.mfu) + " % is above any published large-scale training run "
                                "(PaLM 540B: 46.2 %); the time is likely optimistic");
    return out;
}

json mfu(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens_per_s = require_positive("tokens_per_second", number_arg(args, "tokens_per_second"));
    const Peak peak = peak_from_args(args);
    const std::int64_t gpus = integer_arg(args, "gpus", 1, 100'000'000);
    const Utilization u = utilization(per.model, per.training, per.six_n, tokens_per_s, static_cast<double>(gpus),
                                      peak.flops_per_s);
    json out{{"flops_basis", per.basis},
             {"model_flops_per_token", per.model},
             {"hardware_flops_per_token", per.training},
             {"tokens_per_second", tokens_per_s},
             {"gpus", gpus},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"peak_cluster_flops_per_s", u.cluster_peak_flops_per_s},
             {"achieved_flops_per_s", u.achieved_flops_per_s},
             {"mfu", u.mfu},
             {"hfu", u.hfu},
             {"six_n_mfu", u.six_n_mfu}};
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    if (u.mfu > 1)
        add_warning(out, "tokens_per_second",
                    "mfu is " + percent(u.mfu) +
                        " %: the GPUs cannot exceed 100 % of their peak, so tokens_per_second, gpus or the peak is wrong");
    else if (u.hfu > 1)
        add_warning(out, "tokens_per_second",
                    "hfu is " + percent(u.hfu) +
                        " % (recomputed FLOPs included): above 100 % of peak, so an input is wrong");
    return out;
}

constexpr Method kMethods[] = {
    {"training_cost", training_cost, "training time, GPU-hours and cost from a model or params"},
    {"mfu", mfu, "model FLOPs utilization from measured tokens per second"},
};

}  // namespace

std::span<const Method> training_methods() { return kMethods; }

}  // namespace tally::api
