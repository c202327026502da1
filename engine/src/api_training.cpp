// API of the 6ND thin slice: training FLOPs and time.
#include "tally/api.h"
#include "tally/error.h"
#include "tally/training.h"

namespace tally::api {

namespace {

// {params, tokens, gpus, peak_flops_per_s | peak_tflops, mfu} -> FLOPs (6ND) and time.
json training_time(const json& args) {
    const double params = number_arg(args, "params");
    const double tokens = number_arg(args, "tokens");
    TrainingTimeInput input;
    input.total_flops = training_flops(params, tokens);
    input.gpus = integer_arg(args, "gpus", 1, 100'000'000);
    if (auto tflops = optional_number_arg(args, "peak_tflops"))
        input.peak_flops_per_s = require_positive("peak_tflops", *tflops) * 1e12;
    else
        input.peak_flops_per_s = number_arg(args, "peak_flops_per_s");
    input.mfu = number_arg(args, "mfu");
    const TrainingTime t = estimate_training_time(input);
    return json{{"params", params},
                {"tokens", tokens},
                {"gpus", input.gpus},
                {"peak_flops_per_s", input.peak_flops_per_s},
                {"mfu", input.mfu},
                {"six_nd_flops", t.total_flops},
                {"cluster_flops_per_s", t.cluster_flops_per_s},
                {"seconds", t.seconds},
                {"days", t.days},
                {"gpu_hours", t.gpu_hours}};
}

json methods(const json&) { return list_methods(); }

constexpr Method kMethods[] = {
    {"training_time", training_time, "6ND training FLOPs and wall-clock time from GPUs, peak FLOP/s and MFU"},
    {"methods", methods, "list every API method"},
};

}  // namespace

std::span<const Method> training_methods() { return kMethods; }

}  // namespace tally::api
