// `tally time`: training FLOPs (6ND, or the exact count for a model), wall-clock time, GPU-hours and cost.
#include <ostream>

#include "cli.h"
#include "commands.h"
#include "tally/error.h"

namespace tally::cli {

namespace {

constexpr Option kOptions[] = {
    {"--params", "params", Kind::Number, "model parameters N, e.g. 70e9 (or --model)"},
    {"--model", "model", Kind::String, "model preset id (tally presets); FLOPs are then the exact count"},
    {"--tokens", "tokens", Kind::Number, "training tokens D, e.g. 15e12 (required)"},
    {"--seq", "seq", Kind::Integer, "sequence length for the exact count (with --model)"},
    {"--flops-basis", "flops_basis", Kind::String, "six_nd | exact (default: six_nd with --params, exact with --model)"},
    {"--gpus", "gpus", Kind::Integer, "number of GPUs, whole number >= 1 (required)"},
    {"--hardware", "hardware", Kind::String, "hardware preset id, e.g. h100-sxm (gives the dense peak)"},
    {"--dtype", "dtype", Kind::String, "matmul dtype for the hardware's peak: bf16 (default), fp16, fp8, tf32, fp32"},
    {"--peak-tflops", "peak_tflops", Kind::Number, "dense peak TFLOP/s of one GPU, e.g. 989.5 (overrides --hardware)"},
    {"--peak-flops", "peak_flops_per_s", Kind::Number, "dense peak FLOP/s of one GPU (alternative to --peak-tflops)"},
    {"--mfu", "mfu", Kind::Number, "model FLOPs utilization in (0, 1] (required)"},
    {"--price", "dollars_per_gpu_hour", Kind::Number, "dollars per GPU-hour (optional: adds the cost)"},
    {"--predict-mfu", "predict_mfu", Kind::Flag, "use the step-time model's MFU (tally step) instead of --mfu; layout below"},
    {"--tp", "tp", Kind::Integer, "with --predict-mfu: tensor parallel degree (default 1)"},
    {"--pp", "pp", Kind::Integer, "with --predict-mfu: pipeline parallel degree (default 1)"},
    {"--zero", "zero", Kind::Integer, "with --predict-mfu: ZeRO stage (default 0)"},
    {"--micro-batch", "micro_batch", Kind::Integer, "with --predict-mfu: micro-batch (default 1)"},
    {"--global-batch", "global_batch", Kind::Integer, "with --predict-mfu: sequences per step"},
    {"--recompute", "recompute", Kind::String, "with --predict-mfu: none | selective | full"},
    {"--sequence-parallel", "sequence_parallel", Kind::Flag, "with --predict-mfu: sequence parallelism"},
    {"--flash-attn", "flash_attention", Kind::Flag, "with --predict-mfu: FlashAttention"},
    {"--interleave", "interleave", Kind::Integer, "with --predict-mfu: virtual pipeline chunks per stage"},
};

void print_human(std::ostream& out, const nlohmann::json& r) {
    std::vector<std::pair<std::string, std::string>> rows = {
        {"training FLOPs (" + r["flops_basis"].get<std::string>() + ")", human(r["total_flops"].get<double>())},
        {"6ND", human(r["six_nd"].get<double>())},
        {"cluster FLOP/s (achieved)", human(r["cluster_flops_per_s"].get<double>())},
        {"time (s)", human(r["seconds"].get<double>())},
        {"time (days)", human(r["days"].get<double>())},
        {"GPU-hours", human(r["gpu_hours"].get<double>())},
    };
    if (r.contains("cost_dollars")) rows.push_back({"cost ($)", human(r["cost_dollars"].get<double>())});
    print_table(out, rows);
}

}  // namespace

int cmd_time(int argc, char** argv) {
    return simple_command(argc, argv, "time", "training_cost",
                          "usage: tally time (--params N | --model ID) --tokens D --gpus G\n"
                          "                  (--peak-tflops P | --hardware ID [--dtype T]) --mfu U [--price $] [--json]\n"
                          "FLOPs = 6 N D (or the exact count for a model); seconds = FLOPs / (G * P * U).",
                          kOptions, print_human, [](nlohmann::json& args) {
                              if (!args.contains("predict_mfu")) return;
                              args.erase("predict_mfu");
                              if (args.contains("mfu")) throw InputError("--mfu", "give either --mfu or --predict-mfu, not both");
                              args["mfu"] = "predicted";
                          });
}

}  // namespace tally::cli
