// `tally time`: the 6ND rule and training time, the thin slice through every layer.
#include <ostream>

#include "cli.h"
#include "commands.h"

namespace tally::cli {

namespace {

constexpr Option kOptions[] = {
    {"--params", "params", Kind::Number, "model parameters N, e.g. 70e9 (required)"},
    {"--tokens", "tokens", Kind::Number, "training tokens D, e.g. 15e12 (required)"},
    {"--gpus", "gpus", Kind::Integer, "number of GPUs, whole number >= 1 (required)"},
    {"--peak-tflops", "peak_tflops", Kind::Number, "dense peak TFLOP/s of one GPU, e.g. 989.5 for H100 SXM bf16"},
    {"--peak-flops", "peak_flops_per_s", Kind::Number, "dense peak FLOP/s of one GPU (alternative to --peak-tflops)"},
    {"--mfu", "mfu", Kind::Number, "model FLOPs utilization in (0, 1] (required)"},
};

void print_human(std::ostream& out, const nlohmann::json& r) {
    print_table(out, {
                         {"training FLOPs (6ND)", human(r["six_nd_flops"].get<double>())},
                         {"cluster FLOP/s (achieved)", human(r["cluster_flops_per_s"].get<double>())},
                         {"time (s)", human(r["seconds"].get<double>())},
                         {"time (days)", human(r["days"].get<double>())},
                         {"GPU-hours", human(r["gpu_hours"].get<double>())},
                     });
}

}  // namespace

int cmd_time(int argc, char** argv) {
    return simple_command(argc, argv, "time", "training_time",
                          "usage: tally time --params N --tokens D --gpus G --peak-tflops P --mfu U [--json]\n"
                          "FLOPs = 6 N D; seconds = FLOPs / (G * P * U).",
                          kOptions, print_human);
}

}  // namespace tally::cli
