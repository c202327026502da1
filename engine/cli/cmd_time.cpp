// `tally time`: training FLOPs (6ND, or the exact count for a model), wall-clock time, GPU-hours and cost.
// `tally mfu`: model FLOPs utilization from a measured throughput.
#include <ostream>

#include "cli.h"
#include "commands.h"
#include "tally/error.h"

namespace tally::cli {

namespace {

// Flags shared by time and mfu: the model or params, the FLOPs count and the peak.
#define FLOPS_PEAK_OPTIONS                                                                                      \
    {"--params", "params", Kind::Number, nullptr}, {"--model", "model", Kind::String, nullptr}, kConfigOption,  \
        {"--seq", "seq", Kind::Integer, nullptr}, {"--decoder-seq", "decoder_seq", Kind::Integer, nullptr},     \
        {"--encoder-head", "encoder_head", Kind::String, nullptr},                                              \
        {"--flops-basis", "flops_basis", Kind::String, nullptr}, TALLY_FLOPS_OPTIONS,                           \
        {"--gpus", "gpus", Kind::Integer, nullptr}, {"--hardware", "hardware", Kind::String, nullptr},          \
        {"--dtype", "dtype", Kind::String, nullptr}, {"--peak-tflops", "peak_tflops", Kind::Number, nullptr}, { \
        "--peak-flops", "peak_flops_per_s", Kind::Number, nullptr                                               \
    }

constexpr Option kOptions[] = {
    FLOPS_PEAK_OPTIONS,
    {"--tokens", "tokens", Kind::Number, nullptr},
    {"--mfu", "mfu", Kind::Number, nullptr},
    {"--price", "dollars_per_gpu_hour", Kind::Number, nullptr},
    {"--predict-mfu", "predict_mfu", Kind::Flag,
     "use the step-time model's MFU (tally step) instead of --mfu; layout below"},
    {"--tp", "tp", Kind::Integer, nullptr},
    {"--zero", "zero", Kind::Integer, nullptr},
    {"--micro-batch", "micro_batch", Kind::Integer, nullptr},
    {"--global-batch", "global_batch", Kind::Integer, nullptr},
    {"--sequence-parallel", "sequence_parallel", Kind::Flag, nullptr},
    {"--interleave", "interleave", Kind::Integer, nullptr},
};

constexpr Option kMfuOptions[] = {
    FLOPS_PEAK_OPTIONS,
    {"--tokens-per-second", "tokens_per_second", Kind::Number, nullptr},
};

void print_human(std::ostream& out, const nlohmann::json& r) {
    std::vector<std::pair<std::string, std::string>> rows = {
        {"training FLOPs (" + r["flops_basis"].get<std::string>() + ")", human(r["total_flops"].get<double>())},
        {"6ND", human(r["six_nd"].get<double>())},
        {"cluster FLOP/s (achieved)", human(r["cluster_flops_per_s"].get<double>())},
        {"time (s)", human(r["seconds"].get<double>())},
        {"time (days)", human(r["seconds"].get<double>() / kSecondsPerDay)},
        {"GPU-hours", human(r["gpu_seconds"].get<double>() / kSecondsPerHour)},
    };
    if (r.contains("cost_dollars")) rows.push_back({"cost ($)", human(r["cost_dollars"].get<double>())});
    print_table(out, rows);
}

void print_mfu(std::ostream& out, const nlohmann::json& r) {
    print_table(out,
                {{"model FLOPs per token (" + r["flops_basis"].get<std::string>() + ")",
                  human(r["model_flops_per_token"].get<double>())},
                 {"hardware FLOPs per token (with recomputation)", human(r["hardware_flops_per_token"].get<double>())},
                 {"MFU", human(r["mfu"].get<double>())},
                 {"HFU", human(r["hfu"].get<double>())},
                 {"MFU by 6N", human(r["six_n_mfu"].get<double>())}});
}

// Contradictory flags and flags the chosen inputs would ignore are errors, not silent choices.
void rules(std::span<const Option> options, nlohmann::json& args) {
    const bool has_model = args.contains("model") || args.contains("config_path");
    reject_together(args, options, "params", "model", "the model's exact count replaces --params; give one");
    reject_together(args, options, "params", "config_path", "the model's exact count replaces --params; give one");
    reject_together(args, options, "model", "config_path", "give one model");
    reject_unless(args, options, "seq", has_model,
                  "with --model or --config (6ND from --params has no sequence length)");
    reject_together(args, options, "peak_tflops", "peak_flops_per_s", "give the peak once");
    reject_together(args, options, "hardware", "peak_tflops", "give a hardware preset or a peak, not both");
    reject_together(args, options, "hardware", "peak_flops_per_s", "give a hardware preset or a peak, not both");
    reject_unless(args, options, "dtype", args.contains("hardware"), "with --hardware (it picks the preset's peak)");
    const std::string model_only = "with --model or --config (6ND from --params counts no model shape)";
    for (const char* key : {"decoder_seq", "encoder_head", "capacity_factor"})
        reject_unless(args, options, key, has_model, model_only);
    // The layout flags feed only the step-time model; without --predict-mfu the given --mfu stands alone.
    const bool predict = args.contains("predict_mfu");
    reject_unless(args, options, "predict_mfu", has_model,
                  "with --model or --config (the step-time model needs the model's shape)");
    for (const char* key : {"tp", "zero", "micro_batch", "global_batch", "sequence_parallel", "interleave"})
        reject_unless(args, options, key, predict, "with --predict-mfu (the layout of the step-time model)");
    reject_unless(args, options, "pp", predict || (has_model && args.contains("recompute_layers")),
                  "with --predict-mfu, or with --model or --config and --recompute-layers (counted per stage)");
    fix_flags(args);
}

}  // namespace

std::span<const Option> time_options(std::string_view command) {
    if (command == "time") return kOptions;
    if (command == "mfu") return kMfuOptions;
    return {};
}

int cmd_time(int argc, char** argv) {
    return simple_command(
        argc, argv, "time", "training_cost",
        "usage: tally time (--params N | --model ID | --config FILE) --tokens D --gpus G\n"
        "                  (--peak-tflops P | --hardware ID [--dtype T]) --mfu U [--price $] [--json]\n"
        "FLOPs = 6 N D (or the exact count for a model, with recomputation); seconds = FLOPs / (G * P * U).",
        kOptions, print_human, [](nlohmann::json& args) {
            rules(kOptions, args);
            if (!args.contains("predict_mfu")) return;
            args.erase("predict_mfu");
            if (args.contains("mfu")) throw InputError("--mfu", "give either --mfu or --predict-mfu, not both");
            args["mfu"] = "predicted";
        });
}

int cmd_mfu(int argc, char** argv) {
    return simple_command(argc, argv, "mfu", "mfu",
                          "usage: tally mfu (--params N | --model ID | --config FILE) --tokens-per-second T --gpus G\n"
                          "                 (--peak-tflops P | --hardware ID [--dtype T]) [--json]\n"
                          "MFU = model FLOPs per token × tokens/s ÷ (G × peak) (PaLM, App. B); HFU adds recomputation.",
                          kMfuOptions, print_mfu, [](nlohmann::json& args) { rules(kMfuOptions, args); });
}

}  // namespace tally::cli
